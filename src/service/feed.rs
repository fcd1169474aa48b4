//! What a person's feed shows, reached through their feed link or a bound device: what
//! waits for them, and what they were asked before.

use uuid::Uuid;

use super::{Service, ServiceError, Viewer};
use crate::domain::Decision;
use crate::domain::Status;
use crate::domain::allowance::Allowance;
use crate::domain::people::{self, Person};
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
    /// Whether the viewer has a passkey (the feed then folds its device offers away once
    /// this device has push on too).
    pub has_passkey: bool,
    /// The zone the feed's times are shown in: the viewer's own, else the inbox's own
    /// person's; `None` for UTC.
    pub zone: Option<String>,
    /// The inbox's standing allowances that count now, soonest end first.
    pub allowances: Vec<Allowance>,
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
        let everyone = self.store().people(inbox.id).await?;
        let shared = everyone.iter().any(|p| p.id != viewer.person.id);
        let zone_of = |p: &Person| p.quiet.as_ref().map(|q| q.tz.clone());
        let zone = zone_of(&viewer.person)
            .or_else(|| everyone.iter().find(|p| p.is_inbox_own()).and_then(zone_of));
        let has_passkey = !self.store().passkeys(viewer.person.id).await?.is_empty();
        let allowances = self.store().allowances(inbox.id, None, now).await?;
        Ok(Feed {
            allowances,
            viewer,
            pending,
            recent,
            projects,
            shared,
            has_passkey,
            zone,
        })
    }
}

/// What a decision's page knows of who is looking at it.
pub struct PageReader {
    /// The person of the bound device the browser's cookie names: the page links to their
    /// feed (`/inbox`).
    pub bound: Option<Person>,
    /// The time zone to show times in: the person's own, else the inbox's own person's;
    /// `None` for UTC.
    pub zone: Option<String>,
}

impl Service {
    /// Who reads a page of a decision of `inbox_id`: the bound device (by its `cookie`), and
    /// the zone of `person` (the one a person link names), else of the device's person, else
    /// of the inbox's own person. A database error leaves them unknown.
    pub async fn page_reader(
        &self,
        cookie: Option<&str>,
        person: Option<&Person>,
        inbox_id: Uuid,
    ) -> PageReader {
        let bound = match cookie {
            Some(_) => self.bound_person(cookie).await.map(|(_, p)| p),
            None => None,
        };
        let zone_of = |p: &Person| p.quiet.as_ref().map(|q| q.tz.clone());
        let mut zone = person
            .and_then(zone_of)
            .or_else(|| bound.as_ref().and_then(zone_of));
        if zone.is_none() {
            zone = match self.store().person(inbox_id).await {
                Ok(own) => own.as_ref().and_then(zone_of),
                Err(e) => {
                    tracing::warn!(error = %e, "could not look up the inbox's person for a page");
                    None
                }
            };
        }
        PageReader { bound, zone }
    }
}
