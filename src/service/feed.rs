//! What a person's feed shows, reached through their feed link or a bound device: what
//! waits for them, and what they were asked before.

use time::OffsetDateTime;
use uuid::Uuid;

use super::{Service, ServiceError, Viewer};
use crate::domain::Decision;
use crate::domain::Status;
use crate::domain::people::Person;
use crate::domain::tally;
use crate::storage::ListFilter;

/// How many resolved decisions the feed's history shows.
const HISTORY: usize = 20;
/// How many pending decisions and to-dos one page of the feed shows.
pub const FEED_PAGE: usize = 50;
/// How many pending rows one read of the store brings while a page fills.
const STORE_PAGE: u32 = 200;
/// The most pending rows one feed page reads looking for those that ask the person (the
/// routing rules are read in memory): a page of an inbox whose decisions mostly ask others
/// stops there, shows what it found, and its next link goes on from the last row read, so
/// a page costs the same however many rows the inbox holds and nothing is skipped.
const MAX_SCANNED: usize = 2_000;
/// The most pending decisions the feed counts for its "N waiting": counting is one range of
/// an index, and this bounds it; past it the feed says "More than 10000".
pub const COUNT_CAP: u32 = 10_000;
/// The latest expiry a cursor may name (9999-12-31T23:59:59.999Z, in milliseconds): both
/// databases hold it, and a cursor past it is not one the feed wrote.
const LAST_MS: i64 = 253_402_300_799_999;

/// A place in the feed's pending list, which runs by `(expires_at, id)`: the next page
/// starts after it. Written into the feed's "Next" link as `<expiry ms>.<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedCursor {
    pub expires_at: OffsetDateTime,
    pub id: Uuid,
}

impl FeedCursor {
    /// The place just after `d`.
    pub fn after(d: &Decision) -> FeedCursor {
        FeedCursor {
            expires_at: d.expires_at,
            id: d.id,
        }
    }

    /// The cursor a "Next" link carries; `None` for anything the feed never writes (the
    /// link is the browser's to change, so it is read as hostile).
    pub fn parse(text: &str) -> Option<FeedCursor> {
        if text.len() > 64 {
            return None;
        }
        let (ms, id) = text.split_once('.')?;
        if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let ms: i64 = ms.parse().ok().filter(|ms| *ms <= LAST_MS)?;
        let expires_at =
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()?;
        let id = Uuid::try_parse(id).ok()?;
        Some(FeedCursor { expires_at, id })
    }

    /// The text `parse` reads back. Stored times are whole milliseconds in both stores, so
    /// nothing is lost.
    pub fn encode(&self) -> String {
        let ms = self.expires_at.unix_timestamp_nanos() / 1_000_000;
        format!("{ms}.{}", self.id.hyphenated())
    }
}

/// How many pending items ask the person in all, as far as the feed can tell cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Exactly this many.
    Exactly(u64),
    /// More than this many (the count stopped past `COUNT_CAP`).
    MoreThan(u64),
    /// Not counted: an inbox of several people routes decisions to some of them, which
    /// only reading every row would tell.
    Unknown,
}

/// A person's open work and recent history.
pub struct Feed {
    /// Whose feed it is, in which inbox.
    pub viewer: Viewer,
    /// One page of the pending decisions and to-dos that ask the person, soonest expiry
    /// first (`FEED_PAGE` at most).
    pub pending: Vec<Decision>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<FeedCursor>,
    /// Whether this is the first page (no cursor was given).
    pub first_page: bool,
    /// How many pending items ask the person in all.
    pub waiting: Waiting,
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
    /// The inbox's standing allowances that count now, soonest end first, each with the
    /// calls it let through.
    pub allowances: Vec<super::AllowanceUses>,
}

/// One page of pending items asking a person, and where the next starts.
struct PendingPage {
    items: Vec<Decision>,
    next: Option<FeedCursor>,
}

impl Service {
    /// One page of the feed of a person already known (by their link or a bound device):
    /// the inbox's pending decisions that ask them (`tally::is_asked`), soonest expiry
    /// first, from just after `after` (the first page without it), and those they answered.
    pub async fn person_feed(
        &self,
        viewer: Viewer,
        project: Option<&str>,
        after: Option<FeedCursor>,
    ) -> Result<Feed, ServiceError> {
        let inbox = &viewer.inbox;
        let now = super::now();
        let theirs = |d: &Decision| {
            tally::is_asked(d, &viewer.person.name, now)
                || d.answers
                    .iter()
                    .any(|a| a.person_id == Some(viewer.person.id))
        };
        // The feed's reads do not depend on each other: they run at once, each on a
        // connection of its own, so a page waits for the slowest rather than for their sum
        // (each is a hand-off to a connection's thread, which on a busy machine waits its
        // turn). The count is read with them even where it will not be shown (a short list,
        // an inbox of several people): it reads at most `COUNT_CAP` rows of an index.
        let store = self.store();
        let recent = async {
            store
                .list_decisions(
                    inbox.id,
                    &ListFilter {
                        project: project.map(str::to_string),
                        limit: (HISTORY * 3) as u32,
                        ..ListFilter::default()
                    },
                )
                .await
                .map_err(ServiceError::from)
        };
        let (page, everyone, count, recent, projects, passkeys, allowances) = tokio::try_join!(
            self.pending_asking(&viewer, project, after, FEED_PAGE, MAX_SCANNED),
            async { store.people(inbox.id).await.map_err(ServiceError::from) },
            async {
                store
                    .count_pending(inbox.id, project, now, COUNT_CAP + 1)
                    .await
                    .map_err(ServiceError::from)
            },
            recent,
            async { store.projects(inbox.id).await.map_err(ServiceError::from) },
            async {
                store
                    .passkeys(viewer.person.id)
                    .await
                    .map_err(ServiceError::from)
            },
            self.allowances_and_uses(inbox.id, now),
        )?;
        let shared = everyone.iter().any(|p| p.id != viewer.person.id);
        let waiting = if after.is_none() && page.next.is_none() {
            Waiting::Exactly(page.items.len() as u64)
        } else if shared {
            Waiting::Unknown
        } else {
            // The inbox's only person is asked every decision of it (a routing rule names
            // only people of the inbox, and at least one approver), so the inbox's count is
            // theirs.
            match count {
                n if n > u64::from(COUNT_CAP) => Waiting::MoreThan(u64::from(COUNT_CAP)),
                n => Waiting::Exactly(n),
            }
        };
        let recent = recent
            .into_iter()
            .filter(|d| d.status != Status::Pending && theirs(d))
            .take(HISTORY)
            .collect();
        let zone = viewer
            .person
            .tz
            .clone()
            .or_else(|| everyone.iter().find(|p| p.is_inbox_own())?.tz.clone());
        let has_passkey = !passkeys.is_empty();
        Ok(Feed {
            allowances,
            viewer,
            pending: page.items,
            next: page.next,
            first_page: after.is_none(),
            waiting,
            recent,
            projects,
            shared,
            has_passkey,
            zone,
        })
    }

    /// Every pending decision asking the viewer that `keep` holds, soonest expiry first:
    /// the whole list, read a store page at a time (the session page gathers one agent
    /// session's calls from it, wherever they stand in the list).
    pub async fn all_pending_asking(
        &self,
        viewer: &Viewer,
        keep: impl Fn(&Decision) -> bool,
    ) -> Result<Vec<Decision>, ServiceError> {
        let mut kept = Vec::new();
        let mut after = None;
        loop {
            let page = self
                .pending_asking(viewer, None, after, usize::MAX, STORE_PAGE as usize)
                .await?;
            kept.extend(page.items.into_iter().filter(|d| keep(d)));
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(kept),
            }
        }
    }

    /// The zone a viewer's pages show times in: their own, else the inbox's own person's.
    pub async fn viewer_zone(&self, viewer: &Viewer) -> Result<Option<String>, ServiceError> {
        self.person_zone(Some(&viewer.person), viewer.inbox.id)
            .await
    }

    /// The zone the times told to `person` (of the inbox `inbox_id`) are in: their own, else
    /// the inbox's own person's (who stands for the inbox where no one else is meant);
    /// `None` for UTC.
    pub async fn person_zone(
        &self,
        person: Option<&Person>,
        inbox_id: Uuid,
    ) -> Result<Option<String>, ServiceError> {
        if let Some(tz) = person.and_then(|p| p.tz.clone()) {
            return Ok(Some(tz));
        }
        Ok(self.store().person(inbox_id).await?.and_then(|own| own.tz))
    }

    /// Up to `want` pending items asking the viewer after `after`, reading at most about
    /// `max_scanned` rows: the store's keyset pages are read in turn until the page is full
    /// (and one more item shows there is a next), the rows run out, or the bound is met.
    /// The next page starts after the last row looked at, so an item is on exactly one page.
    async fn pending_asking(
        &self,
        viewer: &Viewer,
        project: Option<&str>,
        after: Option<FeedCursor>,
        want: usize,
        max_scanned: usize,
    ) -> Result<PendingPage, ServiceError> {
        let now = super::now();
        let mut items = Vec::new();
        let mut at = after;
        let mut scanned = 0;
        loop {
            let rows = self
                .store()
                .pending_page(
                    viewer.inbox.id,
                    project,
                    at.map(|c| (c.expires_at, c.id)),
                    STORE_PAGE,
                )
                .await?;
            let more = rows.len() == STORE_PAGE as usize;
            for d in rows {
                scanned += 1;
                let here = FeedCursor::after(&d);
                // One past expiry the sweep has not reached yet is expired here, not shown.
                let d = self.settle(d).await?;
                if d.status == Status::Pending && tally::is_asked(&d, &viewer.person.name, now) {
                    if items.len() == want {
                        return Ok(PendingPage { items, next: at });
                    }
                    items.push(d);
                }
                at = Some(here);
            }
            if !more {
                return Ok(PendingPage { items, next: None });
            }
            if scanned >= max_scanned {
                return Ok(PendingPage { items, next: at });
            }
        }
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
        let zone = match self.person_zone(person.or(bound.as_ref()), inbox_id).await {
            Ok(zone) => zone,
            Err(e) => {
                tracing::warn!(error = %e, "could not look up the inbox's person for a page");
                None
            }
        };
        PageReader { bound, zone }
    }
}
