-- A person's feed pages through an inbox's pending decisions soonest expiry first, by the
-- keyset (expires_at, id): each page is one range of one of these indexes, so it costs the
-- same however many decisions the table holds or the earlier pages showed. Partial, so a
-- resolved decision leaves them. The second serves the feed filtered by project.
CREATE INDEX decisions_pending_expiry ON decisions (inbox_id, expires_at, id)
    WHERE status = 'pending';
CREATE INDEX decisions_pending_project ON decisions (inbox_id, project, expires_at, id)
    WHERE status = 'pending';

-- The feed's project links: each project of an inbox found by one seek of this index from
-- the one before (a loose index scan, `projects`), not by reading every decision.
CREATE INDEX decisions_projects ON decisions (inbox_id, project) WHERE project IS NOT NULL;
