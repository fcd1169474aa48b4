//! `sayso hook <harness>` as each harness runs it: the real binary, the harness's documented
//! JSON on stdin, a real server, the person answering on the page (or from a notification),
//! and the exact stdout and exit code the harness reads.

mod common;

#[path = "hooks/allowances.rs"]
mod allowances;
// The person's passkey, as the security tests stand in for it.
#[allow(dead_code)]
#[path = "security/authenticator.rs"]
mod authenticator;
/// What the authenticator borrows from the security tests' support.
mod support {
    pub use crate::common::forms::no_redirects;
}

#[path = "hooks/approve.rs"]
mod approve;
#[path = "hooks/browser.rs"]
mod browser;
#[path = "browser/checks.rs"]
mod checks;
#[path = "hooks/doctor.rs"]
mod doctor;
#[path = "hooks/doctor_scope.rs"]
mod doctor_scope;
#[path = "hooks/edits.rs"]
mod edits;
#[path = "hooks/elicitation.rs"]
mod elicitation;
#[path = "hooks/elsewhere.rs"]
mod elsewhere;
#[path = "hooks/fallbacks.rs"]
mod fallbacks;
#[path = "hooks/fields.rs"]
mod fields;
#[path = "hooks/go_between.rs"]
mod go_between;
#[path = "hooks/harnesses.rs"]
mod harnesses;
#[path = "hooks/install.rs"]
mod install;
#[path = "hooks/install_files.rs"]
mod install_files;
#[path = "hooks/notify.rs"]
mod notify;
#[path = "hooks/page.rs"]
mod page;
#[path = "hooks/people.rs"]
mod people;
#[path = "hooks/policy.rs"]
mod policy;
#[path = "hooks/project_root.rs"]
mod project_root;
#[path = "hooks/receipts.rs"]
mod receipts;
#[path = "hooks/relay.rs"]
mod relay;
#[path = "hooks/run.rs"]
mod run;
#[path = "hooks/screen.rs"]
mod screen;
#[path = "hooks/session.rs"]
mod session;
