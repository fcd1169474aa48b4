//! The agent API against a real server on port 0, on SQLite and on PostgreSQL.
//!
//! The cases live in modules by what they exercise; `on_both_backends!` below runs each on
//! both stores, as `sqlite::case_name` and `postgres::case_name`.

#[path = "../common/mod.rs"]
mod common;

mod access;
mod allowances;
mod awaits;
mod create;
mod people;
mod races;
mod reads;
mod receipts;
mod resolutions;

/// Runs each case once on a fresh SQLite file and once on a fresh PostgreSQL database; each
/// case is listed under the module that holds it.
macro_rules! on_both_backends {
    ($($module:ident: [$($case:ident),* $(,)?]),* $(,)?) => {
        mod sqlite {
            $($(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let (_db, srv) = crate::common::server::fresh_server().await;
                    super::$module::$case(&srv).await;
                    srv.stop().await;
                }
            )*)*
        }
        mod postgres {
            $($(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(db) = crate::common::db::fresh_pg_url().await else { return };
                    let srv = crate::common::server::TestServer::start(&db.url).await;
                    super::$module::$case(&srv).await;
                    srv.stop().await;
                }
            )*)*
        }
    };
}

on_both_backends!(
    create: [
        every_kind_is_created_and_answered,
        each_validation_rule_is_refused_with_its_path,
        harmless_problems_become_warnings,
        idempotent_create_returns_the_first_handle,
    ],
    awaits: [
        await_returns_at_once_when_resolved,
        await_wakes_on_an_answer_made_while_it_waits,
        await_returns_pending_after_its_timeout,
    ],
    resolutions: [
        expiry_applies_default_outcome_or_none,
        cancel_resolves_and_blocks_later_answers,
        cancel_of_an_expired_decision_gets_409,
        decline_keeps_the_remark,
        second_answer_gets_409,
        bad_answers_are_refused_with_their_path,
    ],
    allowances: [
        a_persons_allow_for_a_while_is_read_and_revoked_with_the_key,
        only_the_persons_allow_on_their_own_approval_makes_one,
        an_allowance_counts_until_its_time_exactly,
        each_call_an_allowance_lets_through_is_recorded_in_its_inbox_alone,
    ],
    access: [
        list_pages_with_a_cursor_newest_first,
        another_inbox_gets_404,
        requests_without_a_valid_key_get_401,
    ],
    reads: [
        each_read_shows_the_decision_as_it_is_now,
        a_decision_read_past_its_expiry_is_never_pending,
    ],
    races: [
        concurrent_answers_and_cancels_have_one_winner,
        answers_racing_expiry_have_one_outcome,
    ],
    people: [
        a_decision_needing_two_resolves_when_both_allow,
        any_no_or_decline_resolves_at_once,
        only_the_people_asked_see_and_answer,
        names_and_counts_that_cannot_work_are_refused,
        one_person_alone_sees_nothing_new,
        racing_answers_count_each_person_once,
    ],
    receipts: [
        each_resolution_gets_a_signed_receipt_in_one_chain,
        receipts_are_refused_clearly,
        a_rule_of_several_people_signs_each_vote,
        concurrent_resolutions_keep_the_chain_intact,
    ],
);

/// Answers racing on two replicas of one PostgreSQL database: each person counted once,
/// the decision resolved once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_replicas_count_each_person_once() {
    let Some(db) = crate::common::db::fresh_pg_url().await else {
        return;
    };
    let a = crate::common::server::TestServer::start(&db.url).await;
    let b = crate::common::server::TestServer::start_replica(&db.url, &a).await;
    people::race(&a, &[&a, &b]).await;
    b.stop().await;
    a.stop().await;
}

/// Resolutions made on two replicas of one PostgreSQL database, their receipts read on both
/// while both chain: one key, one unbroken chain, each resolution once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_replicas_sign_one_chain() {
    let Some(db) = crate::common::db::fresh_pg_url().await else {
        return;
    };
    let a = crate::common::server::TestServer::start(&db.url).await;
    let b = crate::common::server::TestServer::start_replica(&db.url, &a).await;
    receipts::concurrent(&a, &[&a, &b]).await;
    b.stop().await;
    a.stop().await;
}
