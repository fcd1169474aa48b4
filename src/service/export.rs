//! Taking data out: an inbox's decisions with their audit trails as JSON lines, and a copy
//! of the whole database.

use std::path::Path;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::{ListQuery, Service, ServiceError};

/// Which decisions an export takes: one inbox's, created in `[since, until)`.
#[derive(Debug, Clone)]
pub struct ExportQuery {
    pub inbox: String,
    pub since: Option<OffsetDateTime>,
    pub until: Option<OffsetDateTime>,
}

impl Service {
    /// Calls `line` with each decision of the query, newest first, as
    /// `{"decision": <the API's view>, "events": [<audit trail>]}`; returns how many. Reads a
    /// page at a time, so an inbox of any size streams in little memory.
    pub async fn export(
        &self,
        q: &ExportQuery,
        mut line: impl FnMut(&Value) -> std::io::Result<()>,
    ) -> Result<u64, ServiceError> {
        let inbox = self
            .store()
            .inbox_by_name(&q.inbox)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let mut cursor = None;
        let mut written = 0;
        loop {
            let page = self
                .list_decisions(
                    &inbox,
                    ListQuery {
                        limit: 200,
                        cursor,
                        ..ListQuery::default()
                    },
                )
                .await?;
            for view in &page.items {
                if q.until.is_some_and(|until| view.created_at >= until) {
                    continue;
                }
                if q.since.is_some_and(|since| view.created_at < since) {
                    // Newest first: everything after this is older still.
                    return Ok(written);
                }
                let events = self.store().events(view.decision_id).await?;
                line(&json!({"decision": view, "events": events}))
                    .map_err(|e| ServiceError::Internal(format!("writing the export: {e}")))?;
                written += 1;
            }
            match page.next.as_deref().map(uuid::Uuid::parse_str) {
                Some(Ok(next)) => cursor = Some(next),
                _ => return Ok(written),
            }
        }
    }

    /// A consistent copy of the database at `path` (SQLite; PostgreSQL says to use pg_dump).
    pub async fn backup_to(&self, path: &Path) -> Result<(), ServiceError> {
        Ok(self.store().backup_to(path).await?)
    }
}
