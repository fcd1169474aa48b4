//! The `Store` methods both stores answer alike: each by the function of the same name in
//! the store's file of the same name (`inboxes::setting`, `people::person`, ...), so each
//! store's `impl Store` lists only the methods it answers its own way.

/// `impl Store for $store` with the methods given, and every other method forwarded to the
/// store's files. The names the forwarded methods use (the files, the argument and result
/// types) are resolved where the macro is called: the calling store's.
macro_rules! impl_store {
    ($store:ty { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl Store for $store {
            $($own)*

            async fn ping(&self) -> Result<(), StoreError> {
                sqlx::query("SELECT 1")
                    .execute(&self.pool)
                    .await
                    .map_err(store_error)?;
                Ok(())
            }

            async fn setting_or_init(
                &self,
                name: &str,
                candidate: &str,
            ) -> Result<String, StoreError> {
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

            async fn inbox_by_id(&self, id: Uuid) -> Result<Option<Inbox>, StoreError> {
                inboxes::inbox_by_id(self, id).await
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

            async fn api_keys(&self, inbox_id: Uuid) -> Result<Vec<KeyListing>, StoreError> {
                limits::api_keys(self, inbox_id).await
            }

            async fn set_key_urgent(
                &self,
                which: KeyRef<'_>,
                urgent: bool,
            ) -> Result<bool, StoreError> {
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

            async fn insert_decision(
                &self,
                row: InsertDecision<'_>,
            ) -> Result<Inserted, StoreError> {
                creates::insert_decision(self, row).await
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

            async fn set_daily_quota(
                &self,
                inbox_id: Uuid,
                quota: Option<i64>,
            ) -> Result<(), StoreError> {
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
                id: Uuid,
                resolution: &Resolution,
                now: OffsetDateTime,
            ) -> Result<Resolved, StoreError> {
                resolves::resolve(self, id, resolution, now).await
            }

            async fn expire(&self, id: Uuid, now: OffsetDateTime) -> Result<Resolved, StoreError> {
                decisions::expire(self, id, now).await
            }

            async fn expire_due(
                &self,
                now: OffsetDateTime,
                limit: u32,
            ) -> Result<Vec<Swept>, StoreError> {
                decisions::expire_due(self, now, limit).await
            }

            async fn record_event(
                &self,
                id: Uuid,
                kind: EventKind,
                detail: &Value,
                now: OffsetDateTime,
            ) -> Result<(), StoreError> {
                events::record_event(self, id, kind, detail, now).await
            }

            async fn events(&self, id: Uuid) -> Result<Vec<DecisionEvent>, StoreError> {
                events::events(self, id).await
            }

            async fn notifications(&self, id: Uuid) -> Result<Vec<NotificationState>, StoreError> {
                events::notifications(self, id).await
            }

            async fn events_of(
                &self,
                ids: &[Uuid],
            ) -> Result<Vec<(Uuid, DecisionEvent)>, StoreError> {
                events::events_of(self, ids).await
            }

            async fn notifications_of(
                &self,
                ids: &[Uuid],
            ) -> Result<Vec<(Uuid, NotificationState)>, StoreError> {
                events::notifications_of(self, ids).await
            }

            async fn image(&self, id: Uuid) -> Result<Option<(String, Vec<u8>)>, StoreError> {
                decisions::image(self, id).await
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

            async fn receipt_head(
                &self,
                inbox_id: Uuid,
            ) -> Result<Option<StoredReceipt>, StoreError> {
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

            async fn delete_ended_allowances(
                &self,
                now: OffsetDateTime,
            ) -> Result<u64, StoreError> {
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
        }
    };
}
pub(super) use impl_store;
