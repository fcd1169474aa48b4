-- Receipts (docs/SECURITY.md, Receipts): each resolution's signed receipt, chained per inbox.
-- Same conventions as 0001: ids uuid, JSON jsonb (here text: the signed object is kept as
-- the text it was signed as).
--
-- The primary key is the chain's total order: a receipt takes the next seq of its inbox or
-- is not written, so two writers (replicas, or a request and the background chainer) racing
-- for the same place never both get it. `event_id` is the id of the resolution event the
-- receipt is for: the chainer continues after the head's. No reference to `decisions`:
-- a receipt outlives its decision's retention.
CREATE TABLE receipts (
    inbox_id    uuid NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
    seq         bigint NOT NULL,
    decision_id uuid NOT NULL UNIQUE,
    event_id    bigint NOT NULL,
    receipt     text NOT NULL,
    signature   text NOT NULL,
    sha256      text NOT NULL,
    PRIMARY KEY (inbox_id, seq)
);
