-- Why a cancelled decision was withdrawn, when the agent said it in the one way the server
-- reads: `abandoned`, it stopped waiting (its hook was killed, its client went away). The
-- page, the feed and the notes then say so; any other reason stays free text in the event.
ALTER TABLE decisions ADD COLUMN cancel_reason text CHECK (cancel_reason IN ('abandoned'));
