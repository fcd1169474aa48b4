//! Web Push end to end: a browser's subscription stored through the feed's endpoint, and
//! what the push channel sends for it. A local axum server on port 0 plays the push service
//! (no real one can run here); the "browser" is a P-256 key pair and auth secret made in the
//! test, and the payload is decrypted with the test's own RFC 8291/8188 code (`browser.rs`),
//! not with the library that encrypted it.
//!
//! Tests that need the push-subscription store skip themselves, loudly, while the store
//! does not keep subscriptions yet (see `server_keeping_subscriptions`).

#[path = "../common/mod.rs"]
mod common;

mod browser;
mod delivery;
mod feed;
mod push_service;
mod subscriptions;
mod support;
