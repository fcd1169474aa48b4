-- Each call a standing allowance let through is recorded before it runs, as an event of the
-- decision whose Allow made the allowance (kind 'allowance_used', the call in `detail`), so
-- it sits in that decision's audit trail and outlives the allowance: revoking one, or its
-- end, deletes the allowance but never its uses. `allowance_id` names the allowance the
-- use ran on; NULL on every other event. No reference to `allowances`, for that reason.
ALTER TABLE decision_events ADD COLUMN allowance_id TEXT;
CREATE INDEX decision_events_allowance ON decision_events (allowance_id, id)
    WHERE allowance_id IS NOT NULL;
