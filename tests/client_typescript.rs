//! The TypeScript client (`clients/typescript`, docs/CLIENTS.md): its own test
//! suite, run with Node's test runner against this build's `sayso` binary. The suite starts
//! the real server itself and answers as the person, from the feed.
//!
//! Needs `node` and `npm`; where either is missing the test prints `SKIPPED: …` and passes,
//! except under `CI=true`. The package's dev dependencies (TypeScript, to check that the
//! committed `dist/` is what the sources compile to, and the frameworks the adapters' suite
//! runs) are installed into `clients/typescript/node_modules` once and kept there
//! (git-ignored) while the lockfile is the same.

mod common;

use common::npm::{install, node_and_npm, node_suite, typescript_client};

#[test]
fn the_typescript_client_passes_its_suite_against_the_real_server() {
    if !node_and_npm("the TypeScript client's tests") {
        return;
    }
    let dir = typescript_client();
    install(&dir, "typescript client").expect("the client's dev dependencies install");
    node_suite(&dir, &["test", "--silent"], "TypeScript client", &[]);
}
