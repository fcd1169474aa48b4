//! Standing allowances (`domain::allowance`): made by a person's answer, read by the hook,
//! revoked by the person or the key, deleted by the expiry sweep once ended.

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::allowance::{Allowance, Scope};
use crate::storage::rows::{AllowanceRow, millis, store_error};
use crate::storage::{Allowances, StoreError};

#[async_trait]
impl Allowances for SqliteStore {
    async fn add_allowance(&self, a: &Allowance) -> Result<Allowance, StoreError> {
        let mut tx = self.begin_write().await?;
        // One per decision: the first one made from it stands.
        sqlx::query(
            "INSERT INTO allowances (id, inbox_id, decision_id, person_id, person, channel, \
             harness, project, tool_name, rule, session_id, created_at, until) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (decision_id) DO NOTHING",
        )
        .bind(id(a.id))
        .bind(id(a.inbox_id))
        .bind(id(a.decision_id))
        .bind(a.person_id.map(id))
        .bind(&a.person)
        .bind(a.channel.as_str())
        .bind(&a.scope.harness)
        .bind(&a.scope.project)
        .bind(&a.scope.tool_name)
        .bind(&a.scope.rule)
        .bind(&a.session_id)
        .bind(millis(a.created_at))
        .bind(millis(a.until))
        .execute(&mut *tx)
        .await
        .map_err(store_error)?;
        let row = sqlx::query_as::<_, AllowanceRow>(concat!(
            "SELECT ",
            allowance_columns!(),
            " FROM allowances WHERE decision_id = ?"
        ))
        .bind(id(a.decision_id))
        .fetch_one(&mut *tx)
        .await
        .map_err(store_error)?;
        tx.commit().await.map_err(store_error)?;
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
                    " FROM allowances WHERE inbox_id = ? AND until > ? \
                     ORDER BY until, id"
                ))
                .bind(id(inbox_id))
                .bind(millis(now))
                .fetch_all(&self.pool)
                .await
            }
            // `IS` matches NULL to NULL: a scope without a project or rule matches only those
            // without one.
            Some(s) => {
                sqlx::query_as::<_, AllowanceRow>(concat!(
                    "SELECT ",
                    allowance_columns!(),
                    " FROM allowances WHERE inbox_id = ? AND harness = ? \
                     AND tool_name = ? AND project IS ? AND rule IS ? AND until > ? \
                     ORDER BY until DESC, id"
                ))
                .bind(id(inbox_id))
                .bind(&s.harness)
                .bind(&s.tool_name)
                .bind(&s.project)
                .bind(&s.rule)
                .bind(millis(now))
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
                sqlx::query("DELETE FROM allowances WHERE inbox_id = ? AND id = ?")
                    .bind(id(inbox_id))
                    .bind(id(a))
                    .execute(&self.writer)
                    .await
            }
            None => {
                sqlx::query("DELETE FROM allowances WHERE inbox_id = ?")
                    .bind(id(inbox_id))
                    .execute(&self.writer)
                    .await
            }
        }
        .map_err(store_error)?;
        Ok(done.rows_affected())
    }

    async fn delete_ended_allowances(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM allowances WHERE until <= ?")
            .bind(millis(now))
            .execute(&self.writer)
            .await
            .map_err(store_error)?;
        Ok(done.rows_affected())
    }
}
