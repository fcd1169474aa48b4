//! The chats against their platforms: each person answers from a real client where the
//! platform runs here, through a real sayso server.

#[path = "../common/mod.rs"]
mod common;

mod matrix;
