//! Helpers shared by the integration tests. Each test binary uses only a part of them.
#![allow(dead_code)]

pub mod approval;
pub mod browser;
pub mod cli;
pub mod cluster;
pub mod db;
pub mod faulty_proxy;
pub mod first_run;
pub mod forms;
pub mod http;
pub mod mcp;
pub mod mcp_py;
pub mod npm;
pub mod outbox;
pub mod passkey;
pub mod people;
pub mod port;
pub mod process;
pub mod python;
pub mod receiver;
pub mod seeds;
pub mod server;
pub mod smtp;

/// A notification's text without its last line, which says when the question expires
/// ("Expires in 1 h, at 20:34 IST"), and that line; panics when it has none.
pub fn question_and_expiry(message: &serde_json::Value) -> (String, String) {
    let text = message.as_str().expect("a notification's text");
    let (question, expiry) = text.rsplit_once('\n').expect("an expiry line");
    assert!(expiry.starts_with("Expires in "), "{text}");
    (question.to_string(), expiry.to_string())
}
