-- Retention deletes resolved decisions oldest first; this finds them without a scan.
CREATE INDEX decisions_resolved_at ON decisions (resolved_at) WHERE resolved_at IS NOT NULL;
