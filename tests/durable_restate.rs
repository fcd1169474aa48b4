//! Restate workflows that wait on sayso (docs/DURABLE.md, "Restate"): the suite in
//! `clients/typescript/tests_durable/restate/` runs the docs' workflow as written, against a
//! real restate-server (npm's `@restatedev/restate-server`, on loopback) and this build's
//! `sayso serve`, and covers an allow, a denial with its reason, an expiry, and the worker,
//! sayso and Restate stopped mid-wait with the answer given meanwhile; the gated step's runs
//! are counted from the file it writes.
//!
//! Needs `node`, `npm` and the npm registry (for the pinned packages, installed once under
//! the target directory). Where one is missing the test prints `SKIPPED: …` and passes,
//! except under `CI=true`.

mod common;

use common::npm::{install_suite, node_and_npm, node_suite, skip, typescript_client};

#[test]
fn restate_workflows_wait_on_sayso_through_awakeables() {
    if !node_and_npm("the Restate tests") {
        return;
    }
    let suite = typescript_client().join("tests_durable/restate");
    if let Err(why) = install_suite(&suite, "restate-node") {
        return skip(&why);
    }
    node_suite(&suite, &["test", "--silent"], "Restate", &[]);
}
