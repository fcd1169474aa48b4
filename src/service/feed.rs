//! What an inbox's feed shows, reached through its feed link.

use super::{Service, ServiceError};
use crate::domain::inbox::Inbox;
use crate::domain::{Decision, Status};
use crate::storage::ListFilter;

/// The most pending decisions a feed lists.
const MAX_PENDING: u32 = 500;
/// How many resolved decisions the feed's history shows.
const HISTORY: usize = 20;

/// An inbox's open work and recent history.
pub struct Feed {
    pub inbox: Inbox,
    /// Pending decisions and to-dos, soonest expiry first.
    pub pending: Vec<Decision>,
    /// Recently resolved decisions, newest first.
    pub recent: Vec<Decision>,
    /// Every project the inbox has decisions in, for the filter.
    pub projects: Vec<String>,
}

impl Service {
    /// The feed of the inbox a feed token opens, optionally for one project.
    pub async fn feed(&self, token: &str, project: Option<&str>) -> Result<Feed, ServiceError> {
        let inbox_id = self
            .tokens()
            .open_feed_token(token)
            .ok_or(ServiceError::NotFound)?;
        let inbox = self
            .store()
            .inbox_by_id(inbox_id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.inbox_feed(inbox, project).await
    }

    /// The feed of an inbox already opened (by its link or a bound device).
    pub async fn inbox_feed(
        &self,
        inbox: Inbox,
        project: Option<&str>,
    ) -> Result<Feed, ServiceError> {
        let project = project.map(str::to_string);
        let listed = self
            .store()
            .list_decisions(
                inbox.id,
                &ListFilter {
                    status: Some(Status::Pending),
                    project: project.clone(),
                    limit: MAX_PENDING,
                    ..ListFilter::default()
                },
            )
            .await?;
        let mut pending = Vec::with_capacity(listed.len());
        for d in listed {
            let d = self.settle(d).await?;
            if d.status == Status::Pending {
                pending.push(d);
            }
        }
        pending.sort_by_key(|d| (d.expires_at, d.id));
        let recent = self
            .store()
            .list_decisions(
                inbox.id,
                &ListFilter {
                    project,
                    limit: (HISTORY * 3) as u32,
                    ..ListFilter::default()
                },
            )
            .await?
            .into_iter()
            .filter(|d| d.status != Status::Pending)
            .take(HISTORY)
            .collect();
        let projects = self.store().projects(inbox.id).await?;
        Ok(Feed {
            inbox,
            pending,
            recent,
            projects,
        })
    }
}
