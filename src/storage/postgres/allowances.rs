//! Standing allowances (`domain::allowance`): made by a person's answer, read by the hook,
//! revoked by the person or the key, deleted by the expiry sweep once ended.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::allowance::{Allowance, Scope};
use crate::storage::rows::{AllowanceRow, store_error, to_ms_precision};
use crate::storage::{Allowances, StoreError};

#[async_trait]
impl Allowances for PgStore {
    async fn add_allowance(&self, a: &Allowance) -> Result<Allowance, StoreError> {
        // One per decision: the first one made from it stands (the no-op update returns it).
        let row = sqlx::query_as::<_, AllowanceRow>(concat!(
            "INSERT INTO allowances (id, inbox_id, decision_id, person_id, person, channel, \
             harness, project, tool_name, rule, session_id, created_at, until) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
             ON CONFLICT (decision_id) DO UPDATE SET decision_id = allowances.decision_id \
             RETURNING ",
            allowance_columns!()
        ))
        .bind(a.id)
        .bind(a.inbox_id)
        .bind(a.decision_id)
        .bind(a.person_id)
        .bind(&a.person)
        .bind(a.channel.as_str())
        .bind(&a.scope.harness)
        .bind(&a.scope.project)
        .bind(&a.scope.tool_name)
        .bind(&a.scope.rule)
        .bind(&a.session_id)
        .bind(to_ms_precision(a.created_at))
        .bind(to_ms_precision(a.until))
        .fetch_one(&self.pool)
        .await
        .map_err(store_error)?;
        row.try_into()
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
                .bind(inbox_id)
                .bind(now)
                .fetch_all(&self.pool)
                .await
            }
            // A scope without a project or rule matches only those without one.
            Some(s) => {
                sqlx::query_as::<_, AllowanceRow>(concat!(
                    "SELECT ",
                    allowance_columns!(),
                    " FROM allowances WHERE inbox_id = $1 AND harness = $2 \
                     AND tool_name = $3 AND project IS NOT DISTINCT FROM $4 \
                     AND rule IS NOT DISTINCT FROM $5 AND until > $6 ORDER BY until DESC, id"
                ))
                .bind(inbox_id)
                .bind(&s.harness)
                .bind(&s.tool_name)
                .bind(&s.project)
                .bind(&s.rule)
                .bind(now)
                .fetch_all(&self.pool)
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
                    .bind(inbox_id)
                    .bind(a)
                    .execute(&self.pool)
                    .await
            }
            None => {
                sqlx::query("DELETE FROM allowances WHERE inbox_id = $1")
                    .bind(inbox_id)
                    .execute(&self.pool)
                    .await
            }
        }
        .map_err(store_error)?;
        Ok(done.rows_affected())
    }

    async fn delete_ended_allowances(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM allowances WHERE until <= $1")
            .bind(now)
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(done.rows_affected())
    }
}
