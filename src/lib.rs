//! sayso: a self-hosted decision service for AI agents. An agent asks, a person answers
//! from a phone, the agent reads the answer.
#![forbid(unsafe_code)]

pub mod app;
pub mod chat;
pub mod cli;
pub mod client;
pub mod config;
pub mod courier;
pub mod domain;
pub mod hook;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod notify;
pub mod render;
pub mod service;
pub mod storage;
pub mod wake;
pub mod web;
