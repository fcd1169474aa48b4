//! The chats as a person's channels (docs/CHANNELS.md): each platform's courier, listener and
//! inbound URL against a real server, with the platform itself as real as it can be here.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod fields;
mod matrix;
mod slack;
mod slack_standin;
mod standin;
mod telegram;
mod telegram_fields;
mod telegram_lang;
mod telegram_standin;
mod zones;
