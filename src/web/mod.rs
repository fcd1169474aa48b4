//! The HTTP edge that the agent API, the person's pages and MCP share: the one error shape
//! every JSON answer uses, the extractors that read API keys and bodies, and the body limits.
//! It sits below `http` and `mcp`, so neither reaches into the other, and uses `service`,
//! `render` and `domain` (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod client_addr;
pub mod error;
pub mod extract;
pub mod headers;
pub mod json;
pub mod waiting;

/// A create may carry a 5 MiB image as base64 and 64 KiB of Markdown.
pub const CREATE_BODY_LIMIT: usize = 8 * 1024 * 1024;
/// A use of a standing allowance carries the call's input: at most 256 KiB of JSON, and
/// room for its escapes and the other fields.
pub const USE_BODY_LIMIT: usize = 512 * 1024;
/// Every other body is small.
pub const SMALL_BODY_LIMIT: usize = 64 * 1024;
