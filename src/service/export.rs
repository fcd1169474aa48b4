//! Taking data out: an inbox's decisions with their audit trails as JSON lines, and a copy
//! of the whole database.

use std::path::Path;

use serde_json::{Value, json};
use time::OffsetDateTime;

use std::collections::HashMap;

use uuid::Uuid;

use super::{DecisionView, Service, ServiceError};
use crate::storage::ListFilter;

/// Decisions an export reads at a time.
const PAGE: u32 = 200;

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
    /// page at a time (its decisions, their audit trails and notification states: three
    /// queries), so an inbox of any size streams in the memory of one page.
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
            let filter = ListFilter {
                status: None,
                kind: None,
                project: None,
                limit: PAGE + 1,
                before: cursor,
            };
            let mut rows = self.store().list_decisions(inbox.id, &filter).await?;
            let more = rows.len() > PAGE as usize;
            rows.truncate(PAGE as usize);
            cursor = rows.last().map(|d| d.id);
            let mut page = Vec::with_capacity(rows.len());
            let mut older = false;
            for d in rows {
                if q.until.is_some_and(|until| d.created_at >= until) {
                    continue;
                }
                if q.since.is_some_and(|since| d.created_at < since) {
                    // Newest first: everything after this is older still.
                    older = true;
                    break;
                }
                // A pending decision past its time is expired first, as a read of it would.
                page.push(self.settle(d).await?);
            }
            let ids: Vec<Uuid> = page.iter().map(|d| d.id).collect();
            let mut events = grouped(self.store().events_of(&ids).await?);
            let mut notifications = grouped(self.store().notifications_of(&ids).await?);
            for d in &page {
                let view = DecisionView::new(
                    d,
                    self.web_url(d),
                    notifications.remove(&d.id).unwrap_or_default(),
                );
                let events = events.remove(&d.id).unwrap_or_default();
                line(&json!({"decision": view, "events": events}))
                    .map_err(|e| ServiceError::Internal(format!("writing the export: {e}")))?;
                written += 1;
            }
            if older || !more {
                return Ok(written);
            }
        }
    }

    /// A consistent copy of the database at `path` (SQLite; PostgreSQL says to use pg_dump).
    pub async fn backup_to(&self, path: &Path) -> Result<(), ServiceError> {
        Ok(self.store().backup_to(path).await?)
    }
}

/// Rows of several decisions, in their order, by decision.
fn grouped<T>(rows: Vec<(Uuid, T)>) -> HashMap<Uuid, Vec<T>> {
    let mut by_decision: HashMap<Uuid, Vec<T>> = HashMap::new();
    for (id, row) in rows {
        by_decision.entry(id).or_default().push(row);
    }
    by_decision
}
