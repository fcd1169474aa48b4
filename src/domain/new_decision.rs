//! Parsing a create request (`POST /v1/decisions`, MCP `ask_user`) into a `NewDecision`.

use serde_json::Value;

use super::decision::NewDecision;
use super::issues::Issue;

/// Parses and validates a create request body. Every problem is listed with its JSON path;
/// harmless ones become `warnings` on the result.
pub fn parse_new_decision(body: &Value) -> Result<NewDecision, Vec<Issue>> {
    let _ = body;
    todo!()
}
