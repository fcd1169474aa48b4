//! Creates that arrive together are written together (group commit), and grouping changes
//! nothing a client can tell: every acknowledged create is there exactly once with its one
//! `created` event, an idempotency key repeated inside one burst makes one decision and
//! replays it to the rest, notifications and their outbox rows come with each, and the
//! daily quota is never overshot. API keys looked up together (PostgreSQL reads them in
//! batches) each get their own inbox, and a revoked key is refused from the moment its revoke
//! returns; decisions read together (PostgreSQL reads them by id in batches) each come back
//! to their own inbox only. Answers that arrive together are written together too, and still one wins each
//! decision, every await wakes with it, each resolution has one event and one outbox row, and
//! a reader following an inbox's resolutions by event id misses none; the store answers each
//! of many resolutions and votes at once as it would answer it alone. On SQLite and
//! PostgreSQL, over HTTP.

#[path = "../common/mod.rs"]
mod common;

mod answers;
mod creates;
mod reads;

use std::collections::{HashMap, HashSet};

use answers::*;
use common::server::{TestServer, s};
use creates::*;
use futures::future::join_all;
use reads::*;
use reqwest::{Method, StatusCode};
use sayso::domain::outbox::Purpose;
use sayso::domain::people::AnswerRecord;
use sayso::domain::{
    AnswerAction, AnswerChannel, AnsweredBy, Decision, EventKind, OutcomeSource, Resolution, Status,
};
use sayso::http::RateLimit;
use sayso::storage::{Resolved, StoreError};
use serde_json::{Value, json};
use uuid::Uuid;

/// Each case as two tests: one on a fresh SQLite file, one on a fresh PostgreSQL database
/// (skipped, loudly, when none is running).
macro_rules! on_both_stores {
    ($($sqlite:ident, $postgres:ident => $case:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            let db = common::db::fresh_sqlite_url();
            $case(&db.url).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            let Some(db) = common::db::fresh_pg_url().await else {
                return;
            };
            $case(&db.url).await;
        }
    )*};
}

on_both_stores! {
    sqlite_a_burst_of_creates_is_each_written_once,
    postgres_a_burst_of_creates_is_each_written_once => a_burst_of_creates_is_each_written_once;
    sqlite_a_burst_never_overshoots_the_quota,
    postgres_a_burst_never_overshoots_the_quota => a_burst_never_overshoots_the_quota;
    sqlite_keys_read_together_each_get_their_own_inbox,
    postgres_keys_read_together_each_get_their_own_inbox => keys_read_together_each_get_their_own_inbox;
    sqlite_decisions_read_together_each_get_their_own,
    postgres_decisions_read_together_each_get_their_own => decisions_read_together_each_get_their_own;
    sqlite_a_burst_of_answers_has_one_winner_each,
    postgres_a_burst_of_answers_has_one_winner_each => a_burst_of_answers_has_one_winner_each;
    sqlite_resolutions_written_together_answer_as_alone,
    postgres_resolutions_written_together_answer_as_alone => resolutions_written_together_answer_as_alone;
}
