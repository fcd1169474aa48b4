//! sayso as deployed: the real binary behind the real Caddy and nginx, running the
//! configurations of deploy/ (docs/DEPLOY.md). Through each proxy: waits parked past the
//! proxies' 60 s defaults, events as they happen, MCP, the pages over HTTPS, and the client's
//! real address for rate limits and logs. Also the image's health check and the service unit.
//!
//! Caddy and nginx come from Debian's packages (`apt-get install caddy nginx`); where one is
//! missing its tests print `SKIPPED: …` and pass, except under `CI=true`.

mod common;

#[path = "deploy/addresses.rs"]
mod addresses;
#[path = "deploy/pages.rs"]
mod pages;
#[path = "deploy/proxies.rs"]
mod proxies;
#[path = "deploy/service.rs"]
mod service;
#[path = "deploy/stack.rs"]
mod stack;
#[path = "deploy/support.rs"]
mod support;
#[path = "deploy/waits.rs"]
mod waits;
