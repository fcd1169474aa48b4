//! Storing a standing allowance on SQLite; the rest of `Allowances` is in `sql/allowances.rs`.

use super::SqliteStore;
use super::rows::id;
use crate::domain::allowance::Allowance;
use crate::storage::StoreError;
use crate::storage::rows::{AllowanceRow, millis, store_error};

impl SqliteStore {
    /// `Allowances::add_allowance`: the insert that keeps the first, then a read of that one.
    pub(in crate::storage) async fn add_allowance(
        &self,
        a: &Allowance,
    ) -> Result<Allowance, StoreError> {
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
}
