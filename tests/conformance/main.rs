//! The storage conformance suite: every case runs against SQLite and PostgreSQL, each on a
//! fresh database. PostgreSQL comes from `SAYSO_TEST_PG_URL` (see `common::db`).
//!
//! The cases live in modules by resource; `conformance_tests!` below runs each over both
//! stores, as `sqlite::case_name` and `postgres::case_name`.

#[path = "../common/mod.rs"]
mod common;

mod chat;
mod claims;
mod decisions;
mod events;
mod expiry;
mod inboxes;
mod limits;
mod outbox;
mod passkey_migration;
mod passkeys;
mod resolutions;
mod store;
mod support;
mod usage;

use sayso::storage::{PgStore, SqliteStore, Store};

/// A store and the database under it, which is removed after the store is dropped.
struct TestStore {
    store: Box<dyn Store>,
    _db: Box<dyn std::any::Any>,
}

async fn sqlite_store() -> Option<TestStore> {
    let db = common::db::fresh_sqlite_url();
    let store = SqliteStore::connect(&db.url).await.expect("sqlite store");
    Some(TestStore {
        store: Box::new(store),
        _db: Box::new(db),
    })
}

async fn pg_store() -> Option<TestStore> {
    let db = common::db::fresh_pg_url().await?;
    let store = PgStore::connect(&db.url).await.expect("postgres store");
    Some(TestStore {
        store: Box::new(store),
        _db: Box::new(db),
    })
}

/// Instantiates every case for one backend, as `$backend::case_name`; each case is listed
/// under the module that holds it.
macro_rules! conformance_tests {
    ($backend:ident, $setup:ident) => {
        conformance_tests!(@cases $backend, $setup;
            store: [
                ping_answers,
                settings_keep_their_first_value,
            ],
            inboxes: [
                inbox_names_are_unique,
                keys_find_their_inbox,
                inbox_channels_round_trip,
                push_subscriptions_are_upserted_listed_and_removed,
                devices_are_bound_to_their_person,
                people_are_added_listed_changed_and_removed,
                people_are_renamed_keeping_everything_else,
            ],
            decisions: [
                decisions_of_every_kind_read_back_exactly,
                idempotent_insert_returns_the_first_decision,
                concurrent_inserts_with_one_key_make_one_decision,
                a_failing_create_fails_alone_among_concurrent_ones,
                decision_of_another_inbox_is_not_found,
                list_is_newest_first_filtered_and_paged,
            ],
            resolutions: [
                second_resolution_loses_to_the_first,
                resolve_after_expiry_loses_and_stays_pending,
                unknown_decision_is_not_found,
                concurrent_resolutions_have_one_winner_each,
                the_channel_and_device_of_an_answer_are_kept,
                a_cancel_keeps_only_the_reason_the_server_reads,
            ],
            expiry: [
                expire_before_its_time_loses,
                expiry_applies_the_default_outcome,
                expiry_without_default_has_no_outcome,
                expire_due_expires_each_due_decision_once,
                old_resolved_decisions_are_deleted_oldest_first_with_their_trails,
            ],
            events: [
                events_are_kept_in_order,
                notifications_read_back,
                resolutions_are_listed_per_inbox_in_event_order,
            ],
            outbox: [
                outbox_rows_of_an_insert_come_back,
                each_resolution_leaves_one_fan_out,
                enqueue_is_idempotent,
                a_sent_progress_message_is_sent_again,
            ],
            claims: [
                claim_respects_due_times_and_leases,
                concurrent_claims_hand_out_each_message_once,
                a_retried_message_is_rescheduled,
                a_finished_message_is_final_with_its_side_effects,
                a_fan_out_leaves_notifications_alone,
                a_completion_is_recorded_beside_the_webhook,
            ],
            passkeys: [
                passkeys_are_kept_per_person_and_unique,
                a_passkey_is_removed_only_from_its_person,
                a_passkey_counter_moves_only_from_where_it_stands,
                a_challenge_is_spent_once,
                a_notice_is_claimed_and_finished_without_a_decision,
            ],
            limits: [
                keys_are_listed_and_allowed_urgent_by_id_or_hash,
                urgent_questions_are_counted_per_key_and_hour,
                concurrent_urgent_questions_never_pass_the_cap,
                a_spent_budget_holds_and_the_next_one_gathers_the_held,
                held_messages_of_resolved_decisions_are_not_waiting,
                concurrent_counts_never_pass_the_budget,
            ],
            chat: [
                chat_users_are_kept_and_unique_per_inbox,
                chat_posts_are_found_by_decision_and_by_message,
                an_inbound_key_is_first_seen_once,
            ],
            usage: [
                creates_count_on_their_utc_day_and_month,
                a_daily_quota_refuses_the_create_past_it,
                concurrent_creates_never_overshoot_the_quota,
            ],
        );
    };
    (@cases $backend:ident, $setup:ident; $($module:ident: [$($case:ident),* $(,)?]),* $(,)?) => {
        mod $backend {
            $($(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(t) = super::$setup().await else { return };
                    super::$module::$case(&*t.store).await;
                }
            )*)*
        }
    };
}

conformance_tests!(sqlite, sqlite_store);
conformance_tests!(postgres, pg_store);
