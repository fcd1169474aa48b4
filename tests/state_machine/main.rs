//! The decision lifecycle (docs/API.md) as a state machine: random sequences of creates,
//! reads, answers (valid and not), declines, to-do actions, cancels, idempotent replays and
//! time passing, run against a real server on SQLite and on PostgreSQL and checked step by
//! step against a small reference model. proptest shrinks a failing sequence to a short one.
//!
//! Time: the service reads the real clock, so "time passes" is the expiry sweep's own store
//! call (`expire_due`) given a moment in the future; the model expires exactly the decisions
//! due by that moment. Real time passes too: a decision whose `expires_at` falls within the
//! span of a request may be seen either way, and the model follows what was seen.

#[path = "../common/mod.rs"]
mod common;

mod bodies;
mod model;
mod ops;
mod run;

use run::run_state_machine;

/// Cases per backend. Each case is one fresh sequence of up to `MAX_STEPS` operations on
/// decisions of its own; both backends together stay well under a minute.
const CASES_SQLITE: u32 = 256;
const CASES_POSTGRES: u32 = 128;
const MAX_STEPS: usize = 24;

#[test]
fn lifecycle_matches_the_model_on_sqlite() {
    let db = common::db::fresh_sqlite_url();
    run_state_machine(&db.url, CASES_SQLITE);
}

#[test]
fn lifecycle_matches_the_model_on_postgres() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(common::db::fresh_pg_url()) else {
        return;
    };
    run_state_machine(&db.url, CASES_POSTGRES);
    drop(rt);
}
