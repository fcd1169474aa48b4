-- Receipts (docs/SECURITY.md, Receipts): each resolution's signed receipt, chained per inbox.
-- Same conventions as 0001: ids TEXT, JSON TEXT.
--
-- The primary key is the chain's total order: a receipt takes the next seq of its inbox or
-- is not written, so two writers (replicas, or a request and the background chainer) racing
-- for the same place never both get it. `event_id` is the id of the resolution event the
-- receipt is for: the chainer continues after the head's. No reference to `decisions`:
-- a receipt outlives its decision's retention.
CREATE TABLE receipts (
    inbox_id    TEXT NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    decision_id TEXT NOT NULL UNIQUE,
    event_id    INTEGER NOT NULL,
    -- The signed object, as JSON text.
    receipt     TEXT NOT NULL,
    signature   TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    PRIMARY KEY (inbox_id, seq)
);
