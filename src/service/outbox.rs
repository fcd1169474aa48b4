//! What the outbox worker may read and write, and nothing else: the narrow context the
//! notification layer works through, so it never holds the whole service or its store.

use std::time::Duration;

use uuid::Uuid;

use super::vapid::VapidKey;
use super::{DecisionView, Service, ServiceError, now};
use crate::domain::Decision;
use crate::domain::inbox::{Inbox, PushSubscription};
use crate::domain::outbox::{MessageResult, NewMessage, OutboxMessage};
use crate::domain::people::Person;
use crate::storage::{Budget, BudgetRule, StoreError};

/// The outbox as the worker and its channels see it. Cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    svc: Service,
}

impl Service {
    /// The context the outbox worker runs on.
    pub fn outbox(&self) -> Outbox {
        Outbox { svc: self.clone() }
    }
}

impl Outbox {
    /// The service, for the modules of this layer that add to the outbox's reach (chat.rs).
    pub(super) fn service(&self) -> &Service {
        &self.svc
    }

    /// Claims up to `limit` due messages for `lease`, counting the attempt.
    pub async fn claim(
        &self,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        self.svc.store().claim_messages(now(), lease, limit).await
    }

    /// Records how an attempt ended, with its follow-up messages; wakes the worker again when
    /// there are follow-ups, so they go out at once.
    pub async fn finish(
        &self,
        message: &OutboxMessage,
        result: &MessageResult,
        follow_ups: &[NewMessage],
    ) -> Result<(), StoreError> {
        self.svc
            .store()
            .finish_message(message, result, follow_ups, now())
            .await?;
        if let Some(channel) = message.route.channel() {
            self.svc.metrics().attempt(channel, result.status);
        }
        if !follow_ups.is_empty() {
            self.svc.kick_outbox();
        }
        Ok(())
    }

    /// Resolves when a message was written on this replica.
    pub async fn kicked(&self) {
        self.svc.outbox_kicked().await;
    }

    pub async fn decision(&self, id: Uuid) -> Result<Option<Decision>, StoreError> {
        self.svc.store().decision(None, id).await
    }

    /// Every message of a decision, oldest first.
    pub async fn messages(&self, decision_id: Uuid) -> Result<Vec<OutboxMessage>, StoreError> {
        self.svc.store().messages(decision_id).await
    }

    /// Counts `message` against its person's notification budget (`Store::count_notification`).
    pub async fn count_notification(
        &self,
        message: &OutboxMessage,
        rule: BudgetRule,
    ) -> Result<Budget, StoreError> {
        self.svc
            .store()
            .count_notification(message, now(), rule)
            .await
    }

    /// The pending approvals of `d`'s agent session besides `d` itself (its burst, for one
    /// notification), newest first; empty for any other decision.
    pub async fn session_siblings(&self, d: &Decision) -> Result<Vec<Decision>, StoreError> {
        let Some(approval) = &d.spec.approval else {
            return Ok(vec![]);
        };
        if approval.session_id.is_none() {
            return Ok(vec![]);
        }
        let filter = crate::storage::ListFilter {
            status: Some(crate::domain::Status::Pending),
            kind: Some(crate::domain::Kind::Choose),
            project: d.spec.project.clone(),
            limit: 100,
            before: None,
        };
        let rows = self.svc.store().list_decisions(d.inbox_id, &filter).await?;
        Ok(rows
            .into_iter()
            .filter(|s| s.id != d.id && s.spec.same_session(&d.spec))
            .collect())
    }

    pub async fn inbox(&self, id: Uuid) -> Result<Option<Inbox>, StoreError> {
        self.svc.store().inbox_by_id(id).await
    }

    /// The decision as the API shows it (a webhook's body).
    pub async fn view(&self, d: &Decision) -> Result<DecisionView, ServiceError> {
        self.svc.view(d).await
    }

    /// The decision's answer link.
    pub fn web_url(&self, d: &Decision) -> String {
        self.svc.web_url(d)
    }

    /// Where the person answers the decision from `channel` (`Service::person_url`).
    pub fn person_url(
        &self,
        d: &Decision,
        channel: crate::domain::PersonChannel,
        person: Uuid,
    ) -> String {
        self.svc.person_url(d, channel, person)
    }

    /// A person by id.
    pub async fn person(&self, id: Uuid) -> Result<Option<Person>, StoreError> {
        self.svc.store().person(id).await
    }

    /// The zone the times told to `person` are in (`Service::person_zone`).
    pub async fn person_zone(
        &self,
        person: Option<&Person>,
        inbox_id: Uuid,
    ) -> Result<Option<String>, ServiceError> {
        self.svc.person_zone(person, inbox_id).await
    }

    /// The people of an inbox, oldest first.
    pub async fn people(&self, inbox_id: Uuid) -> Result<Vec<Person>, StoreError> {
        self.svc.store().people(inbox_id).await
    }

    /// The decision's events, oldest first.
    pub async fn events(
        &self,
        decision_id: Uuid,
    ) -> Result<Vec<crate::domain::DecisionEvent>, StoreError> {
        self.svc.store().events(decision_id).await
    }

    /// Records an event of the decision (an escalation).
    pub async fn record_event(
        &self,
        decision_id: Uuid,
        kind: crate::domain::EventKind,
        detail: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.svc
            .store()
            .record_event(decision_id, kind, detail, now())
            .await
    }

    /// The asks of `d` to `people` on the channels its `notify` uses, as at its creation
    /// (see `Service::plan_notifications`), carrying `payload`.
    pub fn asks_to(
        &self,
        d: &Decision,
        people: &[&Person],
        payload: &serde_json::Value,
        at: time::OffsetDateTime,
    ) -> Vec<NewMessage> {
        super::notifications::asks_to(
            d.spec.notify,
            self.svc.settings().email_enabled,
            people,
            at,
            d.expires_at,
        )
        .into_iter()
        .map(|m| NewMessage {
            payload: payload.clone(),
            ..m
        })
        .collect()
    }

    /// The service's public base URL, without a trailing slash.
    pub fn public_url(&self) -> &str {
        &self.svc.settings().public_url
    }

    /// A person's push subscriptions.
    pub async fn push_subscriptions(
        &self,
        person: &Person,
    ) -> Result<Vec<PushSubscription>, StoreError> {
        self.svc.store().push_subscriptions(person).await
    }

    /// Forgets a subscription the push service says is gone.
    pub async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
        self.svc.store().remove_push_subscription(endpoint).await
    }

    /// The server's VAPID key pair, made and stored on first use.
    pub async fn vapid_key(&self) -> Result<&VapidKey, StoreError> {
        self.svc.vapid_key().await
    }
}
