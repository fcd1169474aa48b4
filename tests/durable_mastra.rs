//! Mastra workflows waiting on a person through `sayso/mastra` (docs/DURABLE.md): the suite in
//! `clients/typescript/tests_durable/mastra/`, run with Node's test runner against this
//! build's `sayso` binary. Mastra runs at the versions pinned in that folder's lockfile, its
//! runs stored in LibSQL files, offline; the server and the person's answers through the pages
//! are real.
//!
//! The pinned packages (about 160 MB) are installed once into the target directory
//! (`CARGO_TARGET_TMPDIR/durable-mastra`), reused while the lockfile is the same, and linked
//! into the suite's folder as its `node_modules` (git-ignored), with `sayso` linked to this
//! checkout's package. Needs `node`, `npm` and the npm registry for the first install; where
//! one is missing the test prints `SKIPPED: …` and passes, except under `CI=true`.

mod common;

use common::npm::{install_suite, node_and_npm, node_suite, skip, typescript_client};

#[test]
fn mastra_workflows_suspend_on_sayso_and_resume_with_the_answer() {
    if !node_and_npm("the Mastra tests") {
        return;
    }
    let suite = typescript_client().join("tests_durable/mastra");
    if let Err(why) = install_suite(&suite, "durable-mastra") {
        return skip(&why);
    }
    let offline = [("MASTRA_TELEMETRY_DISABLED", "1")];
    node_suite(&suite, &["test", "--silent"], "Mastra", &offline);
}
