-- The language sayso speaks to a person in ("en", "de"); NULL leaves it to their browser,
-- else English.
ALTER TABLE people ADD COLUMN lang TEXT;
