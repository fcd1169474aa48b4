//! The agent's side of a decision: create, read, list, cancel.

use bytes::Bytes;
use serde_json::Value;
use uuid::Uuid;

use crate::domain::people::Person;

use super::inboxes::check_api_key_shape;
use super::shown::Shown;
use super::tokens::{hash_api_key, sha256_hex};
use super::view::{AskHandle, DecisionView};
use super::{Service, ServiceError, now};
use crate::domain::address::{inner_literal, is_global};
use crate::domain::canonical::canonical_json;
use crate::domain::inbox::Inbox;
use crate::domain::new_decision::parse_new_decision;
use crate::domain::spec::Shape;
use crate::domain::{Decision, Kind, NewDecision, Resolution, Status};
use crate::storage::{Idempotency, Inserted, KeyedRead, ListFilter, Resolved};

/// How long a create waits to see where a `callback_url`'s (or completion's) host name leads.
const CALLBACK_LOOKUP: std::time::Duration = std::time::Duration::from_secs(1);

/// The longest `Idempotency-Key` kept.
const MAX_IDEMPOTENCY_KEY: usize = 255;

/// A created (or, for a repeated idempotent request, found) decision.
#[derive(Debug)]
pub struct Created {
    pub handle: AskHandle,
    /// True when an earlier request with the same idempotency key made it.
    pub replayed: bool,
}

/// What a list asks for.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub status: Option<Status>,
    pub kind: Option<Kind>,
    pub project: Option<String>,
    pub limit: u32,
    pub cursor: Option<Uuid>,
}

/// One page of a list, newest first.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[schema(example = json!({"items": [], "next": null}))]
pub struct ListPage {
    pub items: Vec<DecisionView>,
    /// Pass as `cursor` for the next page; null on the last.
    pub next: Option<String>,
}

impl Service {
    /// Validates and stores a new decision for `inbox`.
    pub async fn create_decision(
        &self,
        inbox: &Inbox,
        body: &Value,
        idempotency_key: Option<&str>,
    ) -> Result<Created, ServiceError> {
        self.create_shaped(inbox, body, idempotency_key, None).await
    }

    /// Validates and stores a new decision for `inbox`, asked in the shape of a known ask
    /// tool (`shape`), which every later read words its result in.
    #[tracing::instrument(name = "create", skip_all, fields(inbox = %inbox.name, decision))]
    pub async fn create_shaped(
        &self,
        inbox: &Inbox,
        body: &Value,
        idempotency_key: Option<&str>,
        shape: Option<Shape>,
    ) -> Result<Created, ServiceError> {
        if let Some(key) = idempotency_key {
            check_idempotency_key(key)?;
        }
        let mut new = parse_new_decision(body).map_err(ServiceError::Validation)?;
        new.spec.shape = shape;
        self.check_callback_urls(&mut new).await?;
        // The inbox's people, read once: for a decision that names some, and for the
        // notifications (a create that needs neither reads nothing more).
        let people = if new.spec.routing.is_some() || new.spec.notify != crate::domain::Notify::None
        {
            self.store().people(inbox.id).await?
        } else {
            Vec::new()
        };
        check_routing(inbox, &new, &people)?;
        self.limit_urgent(inbox, &mut new).await?;
        // Only a create with an Idempotency-Key is ever compared with an earlier one.
        let request_hash = idempotency_key.map(|_| sha256_hex(canonical_json(body).as_bytes()));
        let created_at = now();
        let expires_at = created_at + new.ttl;
        let plan = self.plan_notifications(
            inbox,
            &inbox.channels,
            &people,
            &new,
            created_at,
            expires_at,
        );
        let row = crate::storage::InsertDecision {
            id: Uuid::now_v7(),
            inbox_id: inbox.id,
            new: &new,
            created_at,
            expires_at,
            idempotency: idempotency_key
                .zip(request_hash.as_deref())
                .map(|(key, request_hash)| Idempotency { key, request_hash }),
            notifications: plan.states,
            outbox: plan.messages,
        };
        // The outbox worker is woken only when there is something to send.
        let to_send = !row.outbox.is_empty();
        let inserted = self.store().insert_decision(row).await?;
        let (decision, replayed) = match inserted {
            Inserted::New(d) => {
                self.metrics().decision_created(d.kind());
                if to_send {
                    self.kick_outbox();
                }
                (d, false)
            }
            Inserted::Existing {
                decision,
                request_hash: stored,
            } => {
                if request_hash.as_deref() != Some(stored.as_str()) {
                    return Err(ServiceError::IdempotencyMismatch);
                }
                (decision, true)
            }
            Inserted::QuotaExceeded => {
                return Err(ServiceError::QuotaExceeded {
                    retry_after: super::usage::seconds_to_utc_midnight(created_at),
                });
            }
        };
        tracing::Span::current().record("decision", tracing::field::display(decision.id));
        Ok(Created {
            handle: AskHandle {
                decision_id: decision.id,
                web_url: self.web_url(&decision),
                expires_at: decision.expires_at,
                warnings: new.warnings,
            },
            replayed,
        })
    }

    /// A `callback_url` or completion URL that names an inner address literally is refused
    /// now, where the agent sees why, rather than failing at send time where it never would;
    /// a host name that resolves inward is a warning (it may resolve differently when the
    /// request goes).
    async fn check_callback_urls(&self, new: &mut NewDecision) -> Result<(), ServiceError> {
        if self.settings().allow_private_webhooks {
            return Ok(());
        }
        let urls = [
            ("callback_url", new.spec.callback_url.clone()),
            (
                "completion.url",
                new.spec.completion.as_ref().map(|c| c.url.clone()),
            ),
        ];
        for (field, url) in urls {
            let Some(url) = url.and_then(|u| url::Url::parse(&u).ok()) else {
                continue;
            };
            if let Some(ip) = inner_literal(&url) {
                return Err(ServiceError::invalid(
                    field,
                    format!(
                        "names the inner address {ip}; this server calls public addresses only \
                         (set SAYSO_ALLOW_PRIVATE_WEBHOOKS=1 to allow loopback and private ones)"
                    ),
                ));
            }
            if let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) {
                let lookup = tokio::net::lookup_host((host, port));
                if let Ok(Ok(addrs)) = tokio::time::timeout(CALLBACK_LOOKUP, lookup).await
                    && let Some(inner) = addrs.map(|a| a.ip()).find(|ip| !is_global(*ip))
                {
                    new.warnings.push(format!(
                        "{field}: {host} resolves to the inner address {inner}; the request \
                         will be refused unless it resolves to a public address when sent"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The inbox's decision, expired first if its time is up.
    #[tracing::instrument(name = "get", skip_all, fields(inbox = %inbox.name, decision = %id))]
    pub async fn get_decision(&self, inbox: &Inbox, id: Uuid) -> Result<Decision, ServiceError> {
        let d = self
            .store()
            .decision(Some(inbox.id), id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.settle(d).await
    }

    /// The decision of the API key's inbox as the API shows it, written as JSON, expired first
    /// if its time is up. Reading is the hottest request an agent makes, so the key is checked
    /// in the same query as the read; only a miss asks again, to tell a bad key (401) from a
    /// decision that is not there (404). A row unchanged since a view was made of it is
    /// answered with that view (`shown.rs`).
    pub async fn decision_json(&self, api_key: &str, id: Uuid) -> Result<Bytes, ServiceError> {
        check_api_key_shape(api_key)?;
        let now = now();
        let kept = self.inner.shown.get(id).filter(|s| s.holds_at(now));
        let found = self
            .store()
            .decision_for_key(&hash_api_key(api_key), id, kept.as_deref().map(|s| &*s.row))
            .await?;
        let (d, notifications, row) = match found {
            None => {
                self.authenticate(api_key).await?;
                return Err(ServiceError::NotFound);
            }
            Some(KeyedRead::Unchanged) => {
                let kept = kept.ok_or_else(|| {
                    ServiceError::Internal("the store found a row unchanged from none".into())
                })?;
                return Ok(kept.json.clone());
            }
            Some(KeyedRead::Read {
                decision,
                notifications,
                row,
            }) => (*decision, notifications, row),
        };
        if d.status == Status::Pending && now >= d.expires_at {
            // Expiring it may change its notifications: read them again.
            let d = self.settle(d).await?;
            return view_json(&self.view(&d).await?);
        }
        let json = view_json(&DecisionView::new(&d, self.web_url(&d), notifications))?;
        if let Some(row) = row {
            self.inner.shown.put(Shown {
                id,
                row: row.into(),
                json: json.clone(),
                pending_until: (d.status == Status::Pending).then_some(d.expires_at),
            });
        }
        Ok(json)
    }

    /// The decision's audit trail, oldest first.
    pub async fn decision_events(
        &self,
        inbox: &Inbox,
        id: Uuid,
    ) -> Result<Vec<crate::domain::DecisionEvent>, ServiceError> {
        let d = self.get_decision(inbox, id).await?;
        let mut events = self.store().events(id).await?;
        // On oh-my-pi's `ask` the default is what its ask timeout picked: the trail says so.
        if d.spec.shape == Some(Shape::Omp) {
            for e in &mut events {
                if e.kind == crate::domain::EventKind::Expired
                    && e.detail.get("outcome_source").and_then(Value::as_str) == Some("default")
                    && let Some(detail) = e.detail.as_object_mut()
                {
                    detail.insert("chosen_by".into(), Value::from("ask_timeout"));
                }
            }
        }
        Ok(events)
    }

    /// The API view of a decision.
    pub async fn view(&self, d: &Decision) -> Result<DecisionView, ServiceError> {
        let notifications = self.store().notifications(d.id).await?;
        Ok(DecisionView::new(d, self.web_url(d), notifications))
    }

    /// Lists the inbox's decisions, newest first.
    pub async fn list_decisions(
        &self,
        inbox: &Inbox,
        q: ListQuery,
    ) -> Result<ListPage, ServiceError> {
        let limit = q.limit.clamp(1, 200);
        let filter = ListFilter {
            status: q.status,
            kind: q.kind,
            project: q.project,
            limit: limit + 1,
            before: q.cursor,
        };
        let mut rows = self.store().list_decisions(inbox.id, &filter).await?;
        let next = if rows.len() > limit as usize {
            rows.truncate(limit as usize);
            rows.last().map(|d| d.id.simple().to_string())
        } else {
            None
        };
        let mut items = Vec::with_capacity(rows.len());
        for d in rows {
            let d = self.settle(d).await?;
            items.push(self.view(&d).await?);
        }
        Ok(ListPage { items, next })
    }

    /// The agent withdraws a pending decision.
    #[tracing::instrument(name = "cancel", skip_all, fields(inbox = %inbox.name, decision = %id))]
    pub async fn cancel_decision(
        &self,
        inbox: &Inbox,
        id: Uuid,
        reason: Option<String>,
    ) -> Result<Decision, ServiceError> {
        self.get_decision(inbox, id).await?;
        // Expiry is a resolution like any other: cancelling after it is `AlreadyResolved`
        // (409); `Expired` (410) is for a person answering late.
        self.apply(id, &Resolution::cancel(reason))
            .await
            .map_err(|e| match e {
                ServiceError::Expired(d) => ServiceError::AlreadyResolved(d),
                e => e,
            })
    }

    /// Applies a resolution; the first one wins and wakes the decision's waiters.
    pub(super) async fn apply(
        &self,
        id: Uuid,
        resolution: &Resolution,
    ) -> Result<Decision, ServiceError> {
        match self.apply_tallied(id, resolution).await? {
            Ok(won) => Ok(won),
            Err(now) => self.lost(now),
        }
    }

    /// Applies a resolution: `Ok(decision)` when it won (and woke the decision's waiters),
    /// `Err(decision)` as it now stands when it did not. A decision still pending then was
    /// tallied against answers it no longer has (`Resolution::expect_answers`).
    pub(super) async fn apply_tallied(
        &self,
        id: Uuid,
        resolution: &Resolution,
    ) -> Result<Result<Decision, Decision>, ServiceError> {
        match self.store().resolve(id, resolution, now()).await? {
            Resolved::Won(d) => {
                self.resolved_here(&d);
                Ok(Ok(d))
            }
            Resolved::Lost(d) => Ok(Err(self.settle(d).await?)),
        }
    }

    /// The error of a resolution that came too late for `d`.
    pub(super) fn lost(&self, d: Decision) -> Result<Decision, ServiceError> {
        match d.status {
            Status::Expired => Err(ServiceError::Expired(Box::new(d))),
            _ => Err(ServiceError::AlreadyResolved(Box::new(d))),
        }
    }

    /// Returns the decision as it stands, expiring it first if it is pending past its time.
    pub(super) async fn settle(&self, d: Decision) -> Result<Decision, ServiceError> {
        let now = now();
        if d.status != Status::Pending || now < d.expires_at {
            return Ok(d);
        }
        match self.store().expire(d.id, now).await? {
            Resolved::Won(d) => {
                self.resolved_here(&d);
                Ok(d)
            }
            Resolved::Lost(d) => Ok(d),
        }
    }
}

/// The people a decision names must be people of the inbox, and enough of them to agree: a
/// rule nobody can meet would only ever expire.
fn check_routing(inbox: &Inbox, new: &NewDecision, people: &[Person]) -> Result<(), ServiceError> {
    let Some(routing) = &new.spec.routing else {
        return Ok(());
    };
    let known = |name: &String| people.iter().any(|p| &p.name == name);
    let mut issues = Vec::new();
    for (field, names) in [
        ("approvers", &routing.approvers),
        ("escalate_to", &routing.escalate_to),
    ] {
        for (i, name) in names.iter().enumerate() {
            if !known(name) {
                issues.push(crate::domain::Issue {
                    path: format!("{field}[{i}]"),
                    message: format!(
                        "the inbox {:?} has no person named {name:?} (sayso person list --inbox {})",
                        inbox.name, inbox.name
                    ),
                });
            }
        }
    }
    let asked = if routing.approvers.is_empty() {
        people.len()
    } else {
        routing.approvers.len()
    };
    if routing.required as usize > asked {
        issues.push(crate::domain::Issue {
            path: "required".into(),
            message: format!(
                "asks {} people to agree, but the inbox {:?} has {asked} to ask",
                routing.required, inbox.name
            ),
        });
    }
    if issues.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Validation(issues))
    }
}

fn check_idempotency_key(key: &str) -> Result<(), ServiceError> {
    if key.is_empty() || key.chars().count() > MAX_IDEMPOTENCY_KEY {
        return Err(ServiceError::invalid(
            "Idempotency-Key",
            format!("must be 1–{MAX_IDEMPOTENCY_KEY} characters"),
        ));
    }
    Ok(())
}

/// A decision's view as JSON: about 600 bytes, written into a buffer sized for it.
fn view_json(view: &DecisionView) -> Result<Bytes, ServiceError> {
    let mut json = Vec::with_capacity(1024);
    serde_json::to_writer(&mut json, view).map_err(|e| {
        ServiceError::Internal(format!("a decision could not be written as JSON: {e}"))
    })?;
    Ok(Bytes::from(json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_bounded() {
        assert!(check_idempotency_key("k-1").is_ok());
        assert!(check_idempotency_key("").is_err());
        assert!(check_idempotency_key(&"k".repeat(256)).is_err());
    }
}
