//! Trust under hostile input: capability links and API keys are long, random and never kept
//! in plain text; a wrong link or key looks exactly like an absent one and costs no database
//! work; one inbox's key sees nothing of another's; guessing is rate-limited per address;
//! every page carries its security headers; an agent's key never learns, uses or forges
//! the answer to an approval that gates it (self_approval.rs); nor floods the person with
//! waiting requests or notifications (flood.rs), nor crowds their pages out with open
//! connections (connections.rs); a person's feed link alone neither adds a
//! passkey once they have one nor allows with another's (passkeys.rs). (tests/api/,
//! tests/pages.rs and tests/hostile.rs cover the ordinary 401/404 paths, a few page headers
//! and malformed input.)

#[path = "../common/mod.rs"]
mod common;

mod authenticator;
#[path = "../browser/checks.rs"]
mod checks;
mod connections;
mod flood;
mod headers;
mod inner_addresses;
mod isolation;
mod passkeys;
mod rate_limit;
// The hook tests' way of running `sayso hook`; part of it is used here.
#[allow(dead_code, unused_imports)]
#[path = "../hooks/run.rs"]
mod run;
mod secrets;
mod self_approval;
mod support;
mod wrong_links_and_keys;
