-- Nothing to change here. The SQLite migration of this name moves the quota check, the usage
-- count and the `created` event of a create into triggers; PostgreSQL does them in the
-- create's transaction. The file keeps both backends' migrations numbered alike.
SELECT 1;
