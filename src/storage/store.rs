//! The `Store` trait: everything sayso keeps, in parts named for what they hold, each part
//! implemented by the file of the same subject in `sql/` (the SQL both stores share, such
//! as `sql/people.rs`) or in each store (`sqlite/limits.rs`, `postgres/limits.rs`, ...). A
//! `dyn Store` answers every part's methods.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::types::{
    Budget, BudgetRule, InsertDecision, Inserted, KeyListing, KeyRef, KeyedRead, KeysToRevoke,
    ListFilter, Resolved, Signal, StoreError, StoredReceipt, Swept, UrgentUse,
};
use crate::domain::allowance::uses::{AllowanceUse, UsedCall};
use crate::domain::allowance::{Allowance, Scope};
use crate::domain::chat::ChatPost;
use crate::domain::inbox::{Inbox, InboxChannels, PushSubscription, Usage};
use crate::domain::outbox::{Channel, MessageResult, NewMessage, OutboxMessage};
use crate::domain::people::{AnswerRecord, Person};
use crate::domain::webauthn::StoredPasskey;
use crate::domain::{Decision, DecisionEvent, EventKind, NotificationState, Resolution};
use crate::metrics::Snapshot;

/// Where signals from other replicas are delivered.
pub type SignalSink = Arc<dyn Fn(Signal) + Send + Sync>;

/// Everything sayso keeps, each part by the file that holds it. Each method is one transaction.
#[async_trait]
pub trait Store:
    Inboxes
    + KeyedInboxes
    + Limits
    + NewDecisions
    + Decisions
    + Resolutions
    + Events
    + EventLists
    + Quotas
    + People
    + Channels
    + Messages
    + Retention
    + Gauges
    + Passkeys
    + Notices
    + Receipts
    + Allowances
    + AllowanceUses
    + Chat
    + Send
    + Sync
    + 'static
{
    /// Succeeds when the database answers a trivial query.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Starts delivering other replicas' signals to `sink`, where the backend has them
    /// (PostgreSQL); `None` for a backend that is only ever used by one process.
    fn listen(&self, sink: SignalSink) -> Option<tokio::task::JoinHandle<()>>;
}

/// Inboxes, their API keys, and server-wide settings. In `sql/inboxes.rs`.
#[async_trait]
pub trait Inboxes {
    /// The stored value of a server-wide setting; stores `candidate` first if there is none.
    async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError>;

    /// The stored value of a server-wide setting, if it has one.
    async fn setting(&self, name: &str) -> Result<Option<String>, StoreError>;

    /// Stores a server-wide setting, replacing its value.
    async fn put_setting(&self, name: &str, value: &str) -> Result<(), StoreError>;

    /// `Conflict` when the name is taken.
    async fn create_inbox(
        &self,
        name: &str,
        email: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<Inbox, StoreError>;
    async fn inbox_by_name(&self, name: &str) -> Result<Option<Inbox>, StoreError>;
    async fn inbox_by_id(&self, id: Uuid) -> Result<Option<Inbox>, StoreError>;
    async fn count_inboxes(&self) -> Result<i64, StoreError>;

    /// Stores the hash of a new API key for an inbox, allowed `urgent` questions or not;
    /// returns the key's id.
    async fn create_api_key(
        &self,
        inbox_id: Uuid,
        key_hash: &str,
        urgent: bool,
        now: OffsetDateTime,
    ) -> Result<Uuid, StoreError>;
    /// Revokes the key with this hash, or every key of `inbox_id`; returns how many live keys
    /// it revoked.
    async fn revoke_api_keys(
        &self,
        which: KeysToRevoke<'_>,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError>;
    /// The inbox's API keys, revoked ones too, oldest first.
    async fn api_keys(&self, inbox_id: Uuid) -> Result<Vec<KeyListing>, StoreError>;
    /// Allows or forbids a live key `urgent` questions; `false` when no live key matches.
    async fn set_key_urgent(&self, which: KeyRef<'_>, urgent: bool) -> Result<bool, StoreError>;
}

/// The inbox an API key opens, read on every request, so each store reads it its fastest
/// way (SQLite on the request's thread, PostgreSQL in batches). In each store's
/// `inboxes.rs`.
#[async_trait]
pub trait KeyedInboxes {
    /// The inbox of an unrevoked key, by the key's hash, with the key (`Inbox::key`).
    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError>;
}

/// What limits one API key and a flood of asks: the urgent questions a key asked, and each
/// person's notification budget per channel (which keys may ask urgent questions is
/// `Inboxes::set_key_urgent`). In each store's `limits.rs`: each store counts under its
/// own lock.
#[async_trait]
pub trait Limits {
    /// Counts an urgent question of the key, if the key may ask one: allowed, and (with a
    /// `per_hour` cap) fewer than that many in the hour before `now`. One transaction, so
    /// creates racing on several replicas never pass the cap together.
    async fn use_urgent(
        &self,
        key_id: Uuid,
        now: OffsetDateTime,
        per_hour: Option<u32>,
    ) -> Result<UrgentUse, StoreError>;
    /// Counts `message` (an ask or a reminder to a person, on its channel) against the
    /// person's budget on that channel, in one transaction per person and channel, so
    /// workers on several replicas never pass it together. A message already counted is
    /// `Granted` again (a retried delivery), with the `waiting` it was counted with; a
    /// message with no person is always `Granted`. A granted one records how many held
    /// messages it gathers; a spent budget marks the message held.
    async fn count_notification(
        &self,
        message: &OutboxMessage,
        now: OffsetDateTime,
        rule: BudgetRule,
    ) -> Result<Budget, StoreError>;
}

/// Writing new decisions. In each store's `creates.rs`.
#[async_trait]
pub trait NewDecisions {
    /// Inserts a decision, its image, its `created` event and its notification states, unless
    /// the idempotency key is already used in the inbox (then returns the existing decision).
    /// A new decision counts `CREATE_ACTIONS` on the inbox's usage of its `created_at` UTC
    /// day in the same transaction; when the inbox's daily quota has no room for them,
    /// nothing is written (`QuotaExceeded`). A replay costs nothing, over the quota or not.
    async fn insert_decision(&self, row: InsertDecision<'_>) -> Result<Inserted, StoreError>;
}

/// Decisions: reads, lists, and the conditional updates that expire them.
/// In each store's `decisions.rs`.
#[async_trait]
pub trait Decisions {
    /// A decision by id; with `inbox_id`, only if it belongs to that inbox.
    async fn decision(
        &self,
        inbox_id: Option<Uuid>,
        id: Uuid,
    ) -> Result<Option<Decision>, StoreError>;
    async fn list_decisions(
        &self,
        inbox_id: Uuid,
        filter: &ListFilter,
    ) -> Result<Vec<Decision>, StoreError>;

    /// The inbox's pending decisions (of `project` only, when given) in expiry order, by
    /// `(expires_at, id)` strictly after `after`, at most `limit`: a keyset page, which costs
    /// the same however many rows come before it (index `decisions_pending_expiry`).
    async fn pending_page(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        after: Option<(OffsetDateTime, Uuid)>,
        limit: u32,
    ) -> Result<Vec<Decision>, StoreError>;

    /// How many of the inbox's decisions (of `project` only, when given) are pending and
    /// expire after `now`, counted up to `cap` and no further, so the count's cost has a
    /// bound.
    async fn count_pending(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        now: OffsetDateTime,
        cap: u32,
    ) -> Result<u64, StoreError>;

    /// The distinct projects of an inbox's decisions, sorted (at most 100).
    async fn projects(&self, inbox_id: Uuid) -> Result<Vec<String>, StoreError>;
    /// Expires the decision only if it is pending and `expires_at <= now`; its outcome becomes
    /// its `default_outcome`, if any. Same transaction and notice rules as `resolve`.
    async fn expire(&self, id: Uuid, now: OffsetDateTime) -> Result<Resolved, StoreError>;
    /// Expires up to `limit` due decisions (safe to run on every replica at once) and returns
    /// their ids.
    async fn expire_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Swept>, StoreError>;
    /// The decision with its notification states, if it belongs to the inbox of the live API
    /// key with this hash: a read of the API in one query, key check included. With `known`,
    /// the bytes of a row read before (`KeyedRead::Read`'s `row`), a row still exactly so is
    /// `Unchanged` and not decoded; the key is checked all the same.
    async fn decision_for_key(
        &self,
        key_hash: &str,
        id: Uuid,
        known: Option<&[u8]>,
    ) -> Result<Option<KeyedRead>, StoreError>;
    /// The context image: its content type and bytes.
    async fn image(&self, id: Uuid) -> Result<Option<(String, Vec<u8>)>, StoreError>;
}

/// Resolutions, and the votes that count without resolving. In each store's `resolves.rs`.
#[async_trait]
pub trait Resolutions {
    /// Applies `resolution` only if the decision is pending and `now < expires_at` (and, with
    /// `expect_answers`, has exactly that many answers), with its event, in one transaction,
    /// appending `resolution.answer` to its answers; on PostgreSQL also `NOTIFY`s the other
    /// replicas.
    async fn resolve(
        &self,
        id: Uuid,
        resolution: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Resolved, StoreError>;
    /// Appends a person's answer that does not resolve the decision (one of several it
    /// needs), with its `voted` event, only if the decision is pending, `now < expires_at`
    /// and it has exactly `expect_answers` answers: `None` when it is not so (it moved on;
    /// read it again).
    async fn add_answer(
        &self,
        id: Uuid,
        expect_answers: usize,
        answer: &AnswerRecord,
        now: OffsetDateTime,
    ) -> Result<Option<Decision>, StoreError>;
}

/// The audit trail of one decision: its events and notification states. In `sql/events.rs`.
#[async_trait]
pub trait Events {
    async fn record_event(
        &self,
        id: Uuid,
        kind: EventKind,
        detail: &serde_json::Value,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// The decision's events, oldest first.
    async fn events(&self, id: Uuid) -> Result<Vec<DecisionEvent>, StoreError>;
    async fn notifications(&self, id: Uuid) -> Result<Vec<NotificationState>, StoreError>;
}

/// The audit trail read across decisions: an inbox's resolutions in event-id order, and the
/// events and notification states of a page of decisions at once. In each store's
/// `events.rs`.
#[async_trait]
pub trait EventLists {
    /// The inbox's resolutions (answered, declined, cancelled, expired) whose event id is above
    /// `after`, oldest first, at most `limit`: each as (event id, decision id). Ids only grow,
    /// and an id is never seen after a larger one of the same inbox was, so a reader that
    /// remembers the last id it saw misses nothing.
    async fn resolutions_since(
        &self,
        inbox_id: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Uuid)>, StoreError>;
    /// The events of each of `ids`, oldest first within each: a page of an export in one
    /// query rather than one a decision.
    async fn events_of(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, DecisionEvent)>, StoreError>;
    /// The notification states of each of `ids`, by channel within each.
    async fn notifications_of(
        &self,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, NotificationState)>, StoreError>;
}

/// Usage counters and the daily quota. In `sql/usage.rs`, and each store's `usage.rs`.
#[async_trait]
pub trait Quotas {
    /// The inbox's usage on the UTC day `today` and in its month up to that day.
    async fn usage(&self, inbox_id: Uuid, today: time::Date) -> Result<Usage, StoreError>;
    /// Sets (or with `None` removes) the inbox's daily quota of actions.
    async fn set_daily_quota(&self, inbox_id: Uuid, quota: Option<i64>) -> Result<(), StoreError>;
}

/// People: the answerers of an inbox, and the devices bound to them. In `sql/people.rs`.
#[async_trait]
pub trait People {
    /// Binds a new device (a browser that opened a person's feed link) to the person.
    async fn add_device(
        &self,
        id: Uuid,
        person: &Person,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// The person a bound device belongs to; `None` for a device that is not (or no longer)
    /// bound.
    async fn device_person(&self, id: Uuid) -> Result<Option<Person>, StoreError>;

    /// Adds a person to their inbox; `Conflict` when the inbox has one of that name,
    /// `NotFound` for an unknown inbox.
    async fn add_person(&self, person: &Person) -> Result<(), StoreError>;
    /// A person by id.
    async fn person(&self, id: Uuid) -> Result<Option<Person>, StoreError>;
    /// The people of an inbox, oldest first.
    async fn people(&self, inbox_id: Uuid) -> Result<Vec<Person>, StoreError>;
    /// Replaces a person's channels and quiet hours (not their name); for the inbox's own
    /// person, the inbox's email and ntfy too. `NotFound` for an unknown person.
    async fn update_person(&self, person: &Person) -> Result<(), StoreError>;
    /// Gives a person a new name; `Conflict` when their inbox has someone of that name,
    /// `false` when there was no such person.
    async fn rename_person(&self, id: Uuid, name: &str) -> Result<bool, StoreError>;
    /// Removes a person with their devices and push subscriptions; `false` when there was
    /// none.
    async fn remove_person(&self, id: Uuid) -> Result<bool, StoreError>;
}

/// Where an inbox's notifications go: its channels and its browsers' push subscriptions.
/// In `sql/channels.rs`.
#[async_trait]
pub trait Channels {
    /// Where an inbox's notifications go.
    async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError>;
    /// Replaces where an inbox's notifications go (`email` included).
    async fn set_inbox_channels(
        &self,
        inbox_id: Uuid,
        channels: &InboxChannels,
    ) -> Result<(), StoreError>;
    /// Adds (or refreshes, by endpoint) a person's browser's push subscription.
    async fn add_push_subscription(
        &self,
        person: &Person,
        sub: &PushSubscription,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// A person's push subscriptions.
    async fn push_subscriptions(
        &self,
        person: &Person,
    ) -> Result<Vec<PushSubscription>, StoreError>;
    /// Forgets a subscription the push service says is gone.
    async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError>;
}

/// The outbox: messages written with their cause, claimed with leases, finished with their
/// `notified` event. In each store's `outbox.rs`.
#[async_trait]
pub trait Messages {
    /// Adds messages for a decision; one already there with the same channel and purpose is
    /// kept as it is (so enqueueing is idempotent).
    async fn enqueue(
        &self,
        decision_id: Uuid,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// Claims up to `limit` pending messages due at `now` for `lease` (safe on several
    /// replicas at once: a claimed message is not claimed again until its lease runs out),
    /// counting the attempt.
    async fn claim_messages(
        &self,
        now: OffsetDateTime,
        lease: std::time::Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError>;
    /// Records how an attempt ended, in one transaction: the message's new state, the
    /// channel's state in `notifications` (not for `*` fan-outs), a `notified` event on the
    /// decision, and the follow-up messages.
    async fn finish_message(
        &self,
        message: &OutboxMessage,
        result: &MessageResult,
        follow_ups: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// Every message of a decision, oldest first.
    async fn messages(&self, decision_id: Uuid) -> Result<Vec<OutboxMessage>, StoreError>;
}

/// Keeping data for a while only, and copying it whole. In each store's `retention.rs`.
#[async_trait]
pub trait Retention {
    /// Deletes up to `limit` decisions resolved before `cutoff`, oldest first, with their
    /// audit trails, notifications, messages and images; returns how many.
    async fn delete_resolved_before(
        &self,
        cutoff: OffsetDateTime,
        limit: u32,
    ) -> Result<u64, StoreError>;

    /// A consistent copy of the whole database, as of one moment, written to `path` (a new
    /// file). SQLite only; PostgreSQL says to use `pg_dump`.
    async fn backup_to(&self, path: &std::path::Path) -> Result<(), StoreError>;
}

/// What the metrics read when scraped. In `sql/gauges.rs`.
#[async_trait]
pub trait Gauges {
    /// What the metrics read when scraped: pending decisions by kind, waiting messages by
    /// route, and the connection pools.
    async fn metrics_snapshot(&self) -> Result<Snapshot, StoreError>;
}

/// A person's passkeys and the record of passkey challenges already answered. In
/// `sql/passkeys.rs`.
#[async_trait]
pub trait Passkeys {
    /// The passkeys of a person, oldest first.
    async fn passkeys(&self, person_id: Uuid) -> Result<Vec<StoredPasskey>, StoreError>;
    /// Adds a passkey to a person; `Conflict` when its credential id is already stored,
    /// `NotFound` for an unknown person.
    async fn add_passkey(&self, person: &Person, passkey: &StoredPasskey)
    -> Result<(), StoreError>;
    /// Removes a person's passkey: `false` when they have none with that credential id.
    async fn remove_passkey(
        &self,
        person_id: Uuid,
        credential_id: &str,
    ) -> Result<bool, StoreError>;
    /// Moves a passkey's signature counter from `from` to `to` (a conditional update):
    /// `false` when it no longer stands at `from`, because another use came first.
    async fn use_passkey(
        &self,
        credential_id: &str,
        from: u32,
        to: u32,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;
    /// Records a passkey challenge as answered, kept until `expires_at`: `false` when it
    /// already was. Sweeps the records whose `expires_at` is before `now` on the way.
    async fn spend_challenge(
        &self,
        challenge_hash: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;
}

/// The notices to a person that are about no decision (a passkey added to them). In each
/// store's `notices.rs`: PostgreSQL writes them from arrays.
#[async_trait]
pub trait Notices {
    /// Adds messages about no decision (a notice to a person: `NewMessage::person` names
    /// them); each is sent once. Sweeps such messages finished long ago on the way.
    async fn enqueue_notices(
        &self,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
}

/// The inboxes' chains of receipts. In `sql/receipts.rs`.
#[async_trait]
pub trait Receipts {
    /// The last receipt of the inbox's chain, if it has one.
    async fn receipt_head(&self, inbox_id: Uuid) -> Result<Option<StoredReceipt>, StoreError>;
    /// Appends a receipt at its `seq` of its inbox's chain: `false`, writing nothing, when
    /// that place (or a receipt of that decision) is taken, because another writer chained
    /// first.
    async fn append_receipt(&self, receipt: &StoredReceipt) -> Result<bool, StoreError>;
    /// The receipt of a decision of the inbox.
    async fn receipt(
        &self,
        inbox_id: Uuid,
        decision_id: Uuid,
    ) -> Result<Option<StoredReceipt>, StoreError>;
    /// The inbox's receipts from `from_seq` on, in chain order, at most `limit`.
    async fn receipts(
        &self,
        inbox_id: Uuid,
        from_seq: i64,
        limit: u32,
    ) -> Result<Vec<StoredReceipt>, StoreError>;
}

/// Standing allowances (`domain::allowance`). In `sql/allowances.rs`, and each store's
/// `allowances.rs`.
#[async_trait]
pub trait Allowances {
    /// Stores a standing allowance; when one was already made from the same decision, that
    /// one is kept and returned (an answer taken twice never makes a longer or wider one).
    async fn add_allowance(&self, allowance: &Allowance) -> Result<Allowance, StoreError>;
    /// The inbox's allowances that count at `now` (`now < until`), by when they end; with
    /// `scope`, only those of exactly that scope (a missing project or rule matching only a
    /// missing one), latest end first.
    async fn allowances(
        &self,
        inbox_id: Uuid,
        scope: Option<&Scope>,
        now: OffsetDateTime,
    ) -> Result<Vec<Allowance>, StoreError>;
    /// Deletes the inbox's allowance `which`, or all of them; returns how many.
    async fn revoke_allowances(
        &self,
        inbox_id: Uuid,
        which: Option<Uuid>,
    ) -> Result<u64, StoreError>;
    /// Deletes the allowances that ended at or before `now`; returns how many.
    async fn delete_ended_allowances(&self, now: OffsetDateTime) -> Result<u64, StoreError>;
}

/// The calls a standing allowance let through (`domain::allowance::uses`).
/// In `sql/allowance_uses.rs`, and each store's `allowance_uses.rs`.
#[async_trait]
pub trait AllowanceUses {
    /// Records that `call` ran on the inbox's allowance `which`, in one statement that
    /// writes it only while the allowance counts at `now` (`NotFound` otherwise: ended,
    /// revoked, or not this inbox's), as an event of the decision that made it.
    async fn record_allowance_use(
        &self,
        inbox_id: Uuid,
        which: Uuid,
        call: &UsedCall,
        now: OffsetDateTime,
    ) -> Result<AllowanceUse, StoreError>;
    /// The uses of the inbox's allowance `which`, oldest first, at most `limit` from the
    /// use after `after` (an id); they outlive the allowance itself.
    async fn allowance_uses(
        &self,
        inbox_id: Uuid,
        which: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AllowanceUse>, StoreError>;
    /// How many uses each of the inbox's allowances `ids` has (none listed: none).
    async fn allowance_use_counts(
        &self,
        inbox_id: Uuid,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, u64)>, StoreError>;
}

/// The chats' messages (`domain::chat`) and the inbound requests already taken.
/// In `sql/chat.rs`.
#[async_trait]
pub trait Chat {
    /// Remembers a message a chat courier posted for a decision.
    async fn record_chat_post(
        &self,
        post: &ChatPost,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// The messages posted for a decision, oldest first.
    async fn chat_posts(&self, decision: Uuid) -> Result<Vec<ChatPost>, StoreError>;
    /// The decision a chat message was posted for, if it was one of ours.
    async fn chat_post(
        &self,
        channel: Channel,
        conversation: &str,
        message: &str,
    ) -> Result<Option<ChatPost>, StoreError>;
    /// Records an inbound request's key (a signature, an event id) and says whether it is
    /// the first time it is seen; keys older than a day are forgotten.
    async fn first_seen(&self, key: &str, now: OffsetDateTime) -> Result<bool, StoreError>;
}
