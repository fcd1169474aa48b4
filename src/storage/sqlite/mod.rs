//! The SQLite store: the embedded default, one process writing one file.
//!
//! Ids are stored as lowercase hyphenated text (whose order is the UUID's byte order),
//! times as integer milliseconds since the epoch, JSON as text. Writes that read first run
//! in `BEGIN IMMEDIATE` transactions, so two writers never deadlock upgrading a read lock.

/// The columns `DecisionRow` reads, in a macro so queries stay `&'static str`.
macro_rules! decision_columns {
    () => {
        "id, inbox_id, spec, status, outcome, outcome_source, custom, remark, \
         created_at, expires_at, resolved_at, has_image, answered_via, answered_device, answers, cancel_reason"
    };
}

/// The columns `MessageRow` reads.
macro_rules! message_columns {
    () => {
        "id, decision_id, channel, purpose, payload, status, attempts, created_at, \
         next_attempt_at, give_up_at, last_error, person"
    };
}

mod allowance_uses;
mod allowances;
mod channels;
mod chat;
mod checkpoints;
mod connect;
mod creates;
mod decisions;
mod events;
mod gauges;
mod inboxes;
mod limits;
mod listen;
mod outbox;
mod passkeys;
mod people;
mod readers;
mod receipts;
mod resolves;
mod retention;
mod rows;
mod usage;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::sqlite::SqlitePool;
use time::OffsetDateTime;
use uuid::Uuid;

use super::rows::store_error;
use super::{
    Budget, BudgetRule, Inbox, InboxChannels, InsertDecision, Inserted, KeyListing, KeyRef,
    KeyedRead, KeysToRevoke, ListFilter, MessageResult, NewMessage, OutboxMessage,
    PushSubscription, Resolved, SignalSink, Store, StoreError, StoredReceipt, Swept, UrgentUse,
    Usage,
};
use crate::domain::allowance::uses::{AllowanceUse, UsedCall};
use crate::domain::allowance::{Allowance, Scope};
use crate::domain::chat::ChatPost;
use crate::domain::outbox::Channel;
use crate::domain::people::{AnswerRecord, Person};
use crate::domain::webauthn::StoredPasskey;
use crate::domain::{Decision, DecisionEvent, EventKind, NotificationState, Resolution};
use crate::metrics::Snapshot;

/// A store on one SQLite file.
///
/// SQLite lets one writer in at a time and makes the others wait in its busy handler, which
/// sleeps in steps of milliseconds. Every write therefore goes through `writer`, a pool of one
/// connection, so writers queue in the process (in order, without sleeping) and SQLite never
/// sees two. Reads use `pool`; in WAL mode they never wait for the writer.
pub struct SqliteStore {
    pool: SqlitePool,
    /// The hottest reads, run on the request's thread (readers.rs); none for a memory
    /// database, whose only connection is the writer.
    readers: Option<readers::Readers>,
    writer: SqlitePool,
    /// Checkpoints the WAL off the writer's path (checkpoints.rs); none for a memory database.
    _checkpoints: Option<checkpoints::Checkpoints>,
    /// Creates go in groups, through the writer (creates.rs).
    creates: creates::Creates,
    /// So do resolutions and votes (resolves.rs).
    resolves: resolves::Resolves,
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn setting_or_init(&self, name: &str, candidate: &str) -> Result<String, StoreError> {
        inboxes::setting_or_init(self, name, candidate).await
    }

    async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        inboxes::setting(self, name).await
    }

    async fn put_setting(&self, name: &str, value: &str) -> Result<(), StoreError> {
        inboxes::put_setting(self, name, value).await
    }

    async fn create_inbox(
        &self,
        name: &str,
        email: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<Inbox, StoreError> {
        inboxes::create_inbox(self, name, email, now).await
    }

    async fn inbox_by_name(&self, name: &str) -> Result<Option<Inbox>, StoreError> {
        inboxes::inbox_by_name(self, name).await
    }

    async fn inbox_by_id(&self, inbox: Uuid) -> Result<Option<Inbox>, StoreError> {
        inboxes::inbox_by_id(self, inbox).await
    }

    async fn add_device(
        &self,
        id: Uuid,
        person: &Person,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        people::add_device(self, id, person, now).await
    }

    async fn device_person(&self, id: Uuid) -> Result<Option<Person>, StoreError> {
        people::device_person(self, id).await
    }

    async fn add_person(&self, person: &Person) -> Result<(), StoreError> {
        people::add_person(self, person).await
    }

    async fn person(&self, id: Uuid) -> Result<Option<Person>, StoreError> {
        people::person(self, id).await
    }

    async fn people(&self, inbox_id: Uuid) -> Result<Vec<Person>, StoreError> {
        people::people(self, inbox_id).await
    }

    async fn update_person(&self, person: &Person) -> Result<(), StoreError> {
        people::update_person(self, person).await
    }

    async fn rename_person(&self, id: Uuid, name: &str) -> Result<bool, StoreError> {
        people::rename_person(self, id, name).await
    }

    async fn remove_person(&self, id: Uuid) -> Result<bool, StoreError> {
        people::remove_person(self, id).await
    }

    async fn add_answer(
        &self,
        id: Uuid,
        expect_answers: usize,
        answer: &AnswerRecord,
        now: OffsetDateTime,
    ) -> Result<Option<Decision>, StoreError> {
        resolves::add_answer(self, id, expect_answers, answer, now).await
    }

    async fn count_inboxes(&self) -> Result<i64, StoreError> {
        inboxes::count_inboxes(self).await
    }

    async fn create_api_key(
        &self,
        inbox_id: Uuid,
        key_hash: &str,
        urgent: bool,
        now: OffsetDateTime,
    ) -> Result<Uuid, StoreError> {
        inboxes::create_api_key(self, inbox_id, key_hash, urgent, now).await
    }

    async fn inbox_for_key(&self, key_hash: &str) -> Result<Option<Inbox>, StoreError> {
        inboxes::inbox_for_key(self, key_hash).await
    }

    async fn api_keys(&self, inbox_id: Uuid) -> Result<Vec<KeyListing>, StoreError> {
        limits::api_keys(self, inbox_id).await
    }

    async fn set_key_urgent(&self, which: KeyRef<'_>, urgent: bool) -> Result<bool, StoreError> {
        limits::set_key_urgent(self, which, urgent).await
    }

    async fn use_urgent(
        &self,
        key_id: Uuid,
        now: OffsetDateTime,
        per_hour: Option<u32>,
    ) -> Result<UrgentUse, StoreError> {
        limits::use_urgent(self, key_id, now, per_hour).await
    }

    async fn count_notification(
        &self,
        message: &OutboxMessage,
        now: OffsetDateTime,
        rule: BudgetRule,
    ) -> Result<Budget, StoreError> {
        limits::count_notification(self, message, now, rule).await
    }

    async fn revoke_api_keys(
        &self,
        which: KeysToRevoke<'_>,
        now: OffsetDateTime,
    ) -> Result<u64, StoreError> {
        inboxes::revoke_api_keys(self, which, now).await
    }

    async fn insert_decision(&self, row: InsertDecision<'_>) -> Result<Inserted, StoreError> {
        creates::insert_decision(self, row).await
    }

    async fn decision(
        &self,
        inbox_id: Option<Uuid>,
        decision: Uuid,
    ) -> Result<Option<Decision>, StoreError> {
        decisions::decision(self, inbox_id, decision).await
    }

    async fn resolutions_since(
        &self,
        inbox_id: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Uuid)>, StoreError> {
        events::resolutions_since(self, inbox_id, after, limit).await
    }

    async fn usage(&self, inbox_id: Uuid, today: time::Date) -> Result<Usage, StoreError> {
        usage::usage(self, inbox_id, today).await
    }

    async fn set_daily_quota(&self, inbox_id: Uuid, quota: Option<i64>) -> Result<(), StoreError> {
        usage::set_daily_quota(self, inbox_id, quota).await
    }

    async fn projects(&self, inbox_id: Uuid) -> Result<Vec<String>, StoreError> {
        decisions::projects(self, inbox_id).await
    }

    async fn list_decisions(
        &self,
        inbox_id: Uuid,
        filter: &ListFilter,
    ) -> Result<Vec<Decision>, StoreError> {
        decisions::list_decisions(self, inbox_id, filter).await
    }

    async fn pending_page(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        after: Option<(OffsetDateTime, Uuid)>,
        limit: u32,
    ) -> Result<Vec<Decision>, StoreError> {
        decisions::pending_page(self, inbox_id, project, after, limit).await
    }

    async fn count_pending(
        &self,
        inbox_id: Uuid,
        project: Option<&str>,
        now: OffsetDateTime,
        cap: u32,
    ) -> Result<u64, StoreError> {
        decisions::count_pending(self, inbox_id, project, now, cap).await
    }

    async fn resolve(
        &self,
        decision: Uuid,
        resolution: &Resolution,
        now: OffsetDateTime,
    ) -> Result<Resolved, StoreError> {
        resolves::resolve(self, decision, resolution, now).await
    }

    async fn expire(&self, decision: Uuid, now: OffsetDateTime) -> Result<Resolved, StoreError> {
        decisions::expire(self, decision, now).await
    }

    async fn expire_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Swept>, StoreError> {
        decisions::expire_due(self, now, limit).await
    }

    async fn record_event(
        &self,
        decision: Uuid,
        kind: EventKind,
        detail: &Value,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        events::record_event(self, decision, kind, detail, now).await
    }

    async fn events(&self, decision: Uuid) -> Result<Vec<DecisionEvent>, StoreError> {
        events::events(self, decision).await
    }

    async fn notifications(&self, decision: Uuid) -> Result<Vec<NotificationState>, StoreError> {
        events::notifications(self, decision).await
    }

    async fn events_of(&self, ids: &[Uuid]) -> Result<Vec<(Uuid, DecisionEvent)>, StoreError> {
        events::events_of(self, ids).await
    }

    async fn notifications_of(
        &self,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, NotificationState)>, StoreError> {
        events::notifications_of(self, ids).await
    }

    async fn decision_for_key(
        &self,
        key_hash: &str,
        decision: Uuid,
        known: Option<&[u8]>,
    ) -> Result<Option<KeyedRead>, StoreError> {
        decisions::decision_for_key(self, key_hash, decision, known).await
    }

    async fn image(&self, decision: Uuid) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        decisions::image(self, decision).await
    }

    async fn inbox_channels(&self, inbox_id: Uuid) -> Result<InboxChannels, StoreError> {
        channels::inbox_channels(self, inbox_id).await
    }

    async fn set_inbox_channels(
        &self,
        inbox_id: Uuid,
        channels: &InboxChannels,
    ) -> Result<(), StoreError> {
        channels::set_inbox_channels(self, inbox_id, channels).await
    }

    async fn add_push_subscription(
        &self,
        person: &Person,
        sub: &PushSubscription,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        channels::add_push_subscription(self, person, sub, now).await
    }

    async fn push_subscriptions(
        &self,
        person: &Person,
    ) -> Result<Vec<PushSubscription>, StoreError> {
        channels::push_subscriptions(self, person).await
    }

    async fn remove_push_subscription(&self, endpoint: &str) -> Result<(), StoreError> {
        channels::remove_push_subscription(self, endpoint).await
    }

    async fn enqueue(
        &self,
        decision_id: Uuid,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        outbox::enqueue(self, decision_id, messages, now).await
    }

    async fn claim_messages(
        &self,
        now: OffsetDateTime,
        lease: std::time::Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        outbox::claim_messages(self, now, lease, limit).await
    }

    async fn finish_message(
        &self,
        message: &OutboxMessage,
        result: &MessageResult,
        follow_ups: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        outbox::finish_message(self, message, result, follow_ups, now).await
    }

    async fn messages(&self, decision_id: Uuid) -> Result<Vec<OutboxMessage>, StoreError> {
        outbox::messages(self, decision_id).await
    }

    async fn delete_resolved_before(
        &self,
        cutoff: OffsetDateTime,
        limit: u32,
    ) -> Result<u64, StoreError> {
        retention::delete_resolved_before(self, cutoff, limit).await
    }

    async fn backup_to(&self, path: &std::path::Path) -> Result<(), StoreError> {
        retention::backup_to(self, path).await
    }

    async fn metrics_snapshot(&self) -> Result<Snapshot, StoreError> {
        gauges::snapshot(self).await
    }

    async fn passkeys(&self, person_id: Uuid) -> Result<Vec<StoredPasskey>, StoreError> {
        passkeys::passkeys(self, person_id).await
    }

    async fn add_passkey(
        &self,
        person: &Person,
        passkey: &StoredPasskey,
    ) -> Result<(), StoreError> {
        passkeys::add_passkey(self, person, passkey).await
    }

    async fn remove_passkey(
        &self,
        person_id: Uuid,
        credential_id: &str,
    ) -> Result<bool, StoreError> {
        passkeys::remove_passkey(self, person_id, credential_id).await
    }

    async fn use_passkey(
        &self,
        credential_id: &str,
        from: u32,
        to: u32,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        passkeys::use_passkey(self, credential_id, from, to, now).await
    }

    async fn spend_challenge(
        &self,
        challenge_hash: &str,
        expires_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        passkeys::spend_challenge(self, challenge_hash, expires_at, now).await
    }

    async fn enqueue_notices(
        &self,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        passkeys::enqueue_notices(self, messages, now).await
    }

    async fn receipt_head(&self, inbox_id: Uuid) -> Result<Option<StoredReceipt>, StoreError> {
        receipts::receipt_head(self, inbox_id).await
    }

    async fn append_receipt(&self, receipt: &StoredReceipt) -> Result<bool, StoreError> {
        receipts::append_receipt(self, receipt).await
    }

    async fn receipt(
        &self,
        inbox_id: Uuid,
        decision_id: Uuid,
    ) -> Result<Option<StoredReceipt>, StoreError> {
        receipts::receipt(self, inbox_id, decision_id).await
    }

    async fn receipts(
        &self,
        inbox_id: Uuid,
        from_seq: i64,
        limit: u32,
    ) -> Result<Vec<StoredReceipt>, StoreError> {
        receipts::receipts(self, inbox_id, from_seq, limit).await
    }

    async fn add_allowance(&self, allowance: &Allowance) -> Result<Allowance, StoreError> {
        allowances::add_allowance(self, allowance).await
    }

    async fn allowances(
        &self,
        inbox_id: Uuid,
        scope: Option<&Scope>,
        now: OffsetDateTime,
    ) -> Result<Vec<Allowance>, StoreError> {
        allowances::allowances(self, inbox_id, scope, now).await
    }

    async fn revoke_allowances(
        &self,
        inbox_id: Uuid,
        which: Option<Uuid>,
    ) -> Result<u64, StoreError> {
        allowances::revoke_allowances(self, inbox_id, which).await
    }

    async fn delete_ended_allowances(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        allowances::delete_ended_allowances(self, now).await
    }

    async fn record_allowance_use(
        &self,
        inbox_id: Uuid,
        which: Uuid,
        call: &UsedCall,
        now: OffsetDateTime,
    ) -> Result<AllowanceUse, StoreError> {
        allowance_uses::record_allowance_use(self, inbox_id, which, call, now).await
    }

    async fn allowance_uses(
        &self,
        inbox_id: Uuid,
        which: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AllowanceUse>, StoreError> {
        allowance_uses::allowance_uses(self, inbox_id, which, after, limit).await
    }

    async fn allowance_use_counts(
        &self,
        inbox_id: Uuid,
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, u64)>, StoreError> {
        allowance_uses::allowance_use_counts(self, inbox_id, ids).await
    }

    async fn record_chat_post(
        &self,
        post: &ChatPost,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        chat::record_chat_post(self, post, now).await
    }

    async fn chat_posts(&self, decision: Uuid) -> Result<Vec<ChatPost>, StoreError> {
        chat::chat_posts(self, decision).await
    }

    async fn chat_post(
        &self,
        channel: Channel,
        conversation: &str,
        message: &str,
    ) -> Result<Option<ChatPost>, StoreError> {
        chat::chat_post(self, channel, conversation, message).await
    }

    async fn first_seen(&self, key: &str, now: OffsetDateTime) -> Result<bool, StoreError> {
        chat::first_seen(self, key, now).await
    }

    fn listen(&self, _sink: SignalSink) -> Option<tokio::task::JoinHandle<()>> {
        listen::listen(_sink)
    }
}

/// Creates the database file readable and writable by its owner only, before SQLite opens it:
/// it holds the key that signs answer links and the inboxes' webhook secrets. SQLite gives its
/// `-wal` and `-shm` files the mode of the database file. An existing file keeps its mode.
fn create_private(path: &std::path::Path) -> Result<(), StoreError> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    match open.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Other(format!(
            "cannot create the database file {}: {e}",
            path.display()
        ))),
    }
}
