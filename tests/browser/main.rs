//! A person answers in a real Chromium at phone width (360×800), and the agent's await gets
//! that answer. The pages follow docs/PAGES.md; screenshots land in `target/screenshots/`.
//!
//! Browsers take turns (see `common::browser`), so each area runs its cases one after the
//! other in one session.

#[path = "../common/mod.rs"]
mod common;

mod a11y;
mod accessible;
mod checks;
mod choices;
mod feed;
mod forms;
mod hostile;
mod keyboard;
mod lang;
mod no_push;
mod passkey;
mod people;
mod reader;
mod session;
mod support;
mod text;
mod weight;
