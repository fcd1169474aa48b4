-- The CHECK constraints of decisions, written as comparisons. SQLite checks `x IN (three or
-- more constants)` by building a temporary index of the constants, and in a CHECK constraint
-- it builds it again for every row: every decision inserted built and dropped three of them
-- (kind, status, answered_via), sixteen B-tree inserts a row, which a multi-row INSERT of a
-- group of creates paid once per row. The same sets as comparisons cost a few string
-- compares. (outcome_source has two values, which SQLite already compares directly.)
--
-- A CHECK constraint is not part of the file's format, so this is SQLite's documented way
-- of changing one in place (https://sqlite.org/lang_altertable.html, "making other kinds of
-- table schema changes"): the table's CREATE statement is edited in sqlite_schema, the schema
-- version changed (to a value of its own) so other connections read it again, and
-- `writable_schema=RESET` makes this connection read it again too. The rows already there satisfy the new constraints, which
-- accept exactly the same values as the old. Each replace() must find its text: the count
-- checked at the end fails the migration otherwise.
PRAGMA writable_schema = ON;

UPDATE sqlite_schema
SET sql = replace(replace(replace(sql,
    'CHECK (kind IN (''bool'', ''choose'', ''text'', ''form'', ''todo''))',
    'CHECK (kind = ''bool'' OR kind = ''choose'' OR kind = ''text'' OR kind = ''form''
                    OR kind = ''todo'')'),
    'CHECK (status IN (''pending'', ''answered'', ''declined'', ''expired'', ''cancelled''))',
    'CHECK (status = ''pending'' OR status = ''answered'' OR status = ''declined''
                    OR status = ''expired'' OR status = ''cancelled'')'),
    'CHECK (answered_via IN (''link'', ''feed'', ''push'', ''ntfy'', ''email'', ''api''))',
    'CHECK (answered_via = ''link'' OR answered_via = ''feed'' OR answered_via = ''push''
        OR answered_via = ''ntfy'' OR answered_via = ''email'' OR answered_via = ''api'')')
WHERE type = 'table' AND name = 'decisions';

PRAGMA schema_version = 10010;
PRAGMA writable_schema = RESET;

-- Fails the migration (and so rolls it back) unless all three constraints were rewritten.
CREATE TEMP TABLE decision_checks_rewritten (n INTEGER CHECK (n = 3));
INSERT INTO decision_checks_rewritten
SELECT (sql LIKE '%kind = ''todo''%') + (sql LIKE '%status = ''cancelled''%')
       + (sql LIKE '%answered_via = ''api''%') - 3 * (sql LIKE '%IN (''bool''%')
FROM sqlite_schema WHERE type = 'table' AND name = 'decisions';
DROP TABLE decision_checks_rewritten;
