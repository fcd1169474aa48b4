//! The chat channels against stand-ins of their platforms on loopback, and sayso's own server
//! on port 0. Each platform's cases are in a module of its own, named for it.

#[path = "../common/mod.rs"]
mod common;

mod slack;
mod slack_standin;
