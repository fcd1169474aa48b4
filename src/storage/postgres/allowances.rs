//! Storing a standing allowance on PostgreSQL; the rest of `Allowances` is in
//! `sql/allowances.rs`.

use super::PgStore;
use crate::domain::allowance::Allowance;
use crate::storage::StoreError;
use crate::storage::rows::{AllowanceRow, store_error, to_ms_precision};

impl PgStore {
    /// `Allowances::add_allowance`: one upsert that returns the first.
    pub(in crate::storage) async fn add_allowance(
        &self,
        a: &Allowance,
    ) -> Result<Allowance, StoreError> {
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
}
