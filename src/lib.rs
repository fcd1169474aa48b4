//! sayso: a self-hosted decision service for AI agents.
#![forbid(unsafe_code)]

pub mod domain;
pub mod storage;
