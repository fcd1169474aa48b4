//! What a person's feed shows, reached through their feed link or a bound device: what
//! waits for them, and what they were asked before.

use super::{Service, ServiceError, Viewer};
use crate::domain::Decision;
use crate::domain::Status;
use crate::domain::people;
use crate::storage::ListFilter;

/// The most pending decisions a feed lists.
const MAX_PENDING: u32 = 500;
/// How many resolved decisions the feed's history shows.
const HISTORY: usize = 20;

/// A person's open work and recent history.
pub struct Feed {
    /// Whose feed it is, in which inbox.
    pub viewer: Viewer,
    /// Pending decisions and to-dos, soonest expiry first.
    pub pending: Vec<Decision>,
    /// Recently resolved decisions, newest first.
    pub recent: Vec<Decision>,
    /// Every project the inbox has decisions in, for the filter.
    pub projects: Vec<String>,
    /// Whether the inbox has people besides the viewer (the feed then says whose it is).
    pub shared: bool,
}

impl Service {
    /// The feed of a person already known (by their link or a bound device): the inbox's
    /// decisions that ask them (`people::is_asked`), and those they answered.
    pub async fn person_feed(
        &self,
        viewer: Viewer,
        project: Option<&str>,
    ) -> Result<Feed, ServiceError> {
        let inbox = &viewer.inbox;
        let now = super::now();
        let theirs = |d: &Decision| {
            people::is_asked(d, &viewer.person.name, now)
                || d.answers
                    .iter()
                    .any(|a| a.person_id == Some(viewer.person.id))
        };
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
            if d.status == Status::Pending && people::is_asked(&d, &viewer.person.name, now) {
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
            .filter(|d| d.status != Status::Pending && theirs(d))
            .take(HISTORY)
            .collect();
        let projects = self.store().projects(inbox.id).await?;
        let shared = self
            .store()
            .people(inbox.id)
            .await?
            .iter()
            .any(|p| p.id != viewer.person.id);
        Ok(Feed {
            viewer,
            pending,
            recent,
            projects,
            shared,
        })
    }
}
