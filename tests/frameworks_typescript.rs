//! The TypeScript package's framework adapters (`sayso/ai`, …; docs/CLIENTS.md): their
//! suite, `npm run test:frameworks`, run with Node's test runner against this build's `sayso`
//! binary. Each framework runs at the version pinned in `clients/typescript/package.json`,
//! driven by its own scripted model (no network, no model key); the server and the person's
//! answers through the pages are real.
//!
//! Needs `node`, `npm` and the npm registry (for the pinned frameworks, installed once into
//! `clients/typescript/node_modules`, git-ignored, and reused while the lockfile is the same).
//! Where one is missing the test prints `SKIPPED: …` and passes, except under `CI=true`.

mod common;

use common::npm::{install, node_and_npm, node_suite, skip, typescript_client};

#[test]
fn the_framework_adapters_pass_their_suite_against_the_real_server() {
    if !node_and_npm("the framework adapters' tests") {
        return;
    }
    let dir = typescript_client();
    if let Err(why) = install(&dir, "frameworks") {
        return skip(&why);
    }
    node_suite(
        &dir,
        &["run", "test:frameworks", "--silent"],
        "frameworks",
        &[],
    );
}
