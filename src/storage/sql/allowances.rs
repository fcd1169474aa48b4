//! Standing allowances (`domain::allowance`): made by a person's answer, read by the hook,
//! revoked by the person or the key, deleted by the expiry sweep once ended.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::allowance::{Allowance, Scope};
use crate::storage::rows::{AllowanceRow, At, Id, store_error};
use crate::storage::{Allowances, StoreError};

for_both_stores! {
    #[async_trait]
    impl Allowances for Backend {
        async fn add_allowance(&self, a: &Allowance) -> Result<Allowance, StoreError> {
            // The stores keep the first allowance of a decision each their own way: the
            // inherent `add_allowance` in `sqlite/allowances.rs` and `postgres/allowances.rs`.
            Backend::add_allowance(self, a).await
        }

        async fn allowances(
            &self,
            inbox_id: Uuid,
            scope: Option<&Scope>,
            now: OffsetDateTime,
        ) -> Result<Vec<Allowance>, StoreError> {
            let rows = match scope {
                None => {
                    sqlx::query_as::<_, AllowanceRow>(concat!(
                        "SELECT ",
                        allowance_columns!(),
                        " FROM allowances WHERE inbox_id = $1 AND until > $2 \
                         ORDER BY until, id"
                    ))
                    .bind(Id(inbox_id))
                    .bind(At(now))
                    .fetch_all(self.reads())
                    .await
                }
                // A scope without a project or rule matches only those without one (SQLite
                // reads `IS NOT DISTINCT FROM` as its `IS`).
                Some(s) => {
                    sqlx::query_as::<_, AllowanceRow>(concat!(
                        "SELECT ",
                        allowance_columns!(),
                        " FROM allowances WHERE inbox_id = $1 AND harness = $2 \
                         AND tool_name = $3 AND project IS NOT DISTINCT FROM $4 \
                         AND rule IS NOT DISTINCT FROM $5 AND until > $6 ORDER BY until DESC, id"
                    ))
                    .bind(Id(inbox_id))
                    .bind(&s.harness)
                    .bind(&s.tool_name)
                    .bind(&s.project)
                    .bind(&s.rule)
                    .bind(At(now))
                    .fetch_all(self.reads())
                    .await
                }
            }
            .map_err(store_error)?;
            rows.into_iter().map(TryInto::try_into).collect()
        }

        async fn revoke_allowances(
            &self,
            inbox_id: Uuid,
            which: Option<Uuid>,
        ) -> Result<u64, StoreError> {
            let done = match which {
                Some(a) => {
                    sqlx::query("DELETE FROM allowances WHERE inbox_id = $1 AND id = $2")
                        .bind(Id(inbox_id))
                        .bind(Id(a))
                        .execute(self.writes())
                        .await
                }
                None => {
                    sqlx::query("DELETE FROM allowances WHERE inbox_id = $1")
                        .bind(Id(inbox_id))
                        .execute(self.writes())
                        .await
                }
            }
            .map_err(store_error)?;
            Ok(done.rows_affected())
        }

        async fn delete_ended_allowances(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
            let done = sqlx::query("DELETE FROM allowances WHERE until <= $1")
                .bind(At(now))
                .execute(self.writes())
                .await
                .map_err(store_error)?;
            Ok(done.rows_affected())
        }
    }
}
