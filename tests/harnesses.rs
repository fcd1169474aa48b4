//! The real harnesses, installed from npm at pinned versions, driven offline by a scripted
//! model endpoint on loopback, against a real sayso server: each hook allows, denies with the
//! person's reason and falls back safely; each ask tool, called through its own harness's
//! client, hands the model exactly its seed document's result (docs/HARNESSES.md).

mod common;

#[path = "harnesses/claude.rs"]
mod claude;
#[path = "harnesses/claude_elicit.rs"]
mod claude_elicit;
#[path = "harnesses/codex.rs"]
mod codex;
#[path = "harnesses/copilot.rs"]
mod copilot;
#[path = "harnesses/gemini.rs"]
mod gemini;
#[path = "harnesses/omp.rs"]
mod omp;
#[path = "harnesses/pi.rs"]
mod pi;
#[path = "harnesses/rig.rs"]
mod rig;
// The hook tests' way of running a server and answering its question; part of it is used here.
#[allow(dead_code)]
#[path = "hooks/run.rs"]
mod run;
