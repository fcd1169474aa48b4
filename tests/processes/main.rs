//! The `sayso` binary as people run it: first run, admin commands, and two replicas on one
//! PostgreSQL database waking each other's waiters.

#[path = "../common/mod.rs"]
mod common;

mod admin;
mod first_run;
mod logs;
mod mail_queue;
mod replica;
mod wakes;
