//! `approve`: the permission-prompt tool of headless Claude Code (`claude -p
//! --permission-prompt-tool mcp__sayso__approve`), and of any client that can only ask
//! through MCP. It takes `{tool_name, input, tool_use_id}`, asks the person with the same
//! approval `sayso hook` makes, waits, and answers with the one text Claude Code reads:
//! `{"behavior": "allow", "updatedInput": …}` or `{"behavior": "deny", "message": …}`.
//! Nothing but the person's Allow allows: no answer in time, bad arguments and server
//! trouble all deny, with the reason. Whenever it answers without the person's answer, or
//! its client gives up on the call, the question is withdrawn as abandoned: nothing waits
//! for a later answer, so the person is never left an Allow that would run nothing.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::SaysoMcp;
use crate::domain::Status;
use crate::domain::approval::{ALLOW, ALLOW_SESSION};
use crate::domain::inbox::Inbox;
use crate::render::approval::{ToolCallRef, create_body, project_of};
use crate::service::ServiceError;

pub const NAME: &str = "approve";

/// How long the tool waits for the person unless `wait_s` says otherwise.
pub const DEFAULT_WAIT_S: u64 = 900;
/// How long the question stays open past the tool's wait, should withdrawing it fail (the
/// database unavailable right then).
const OPEN_AFTER_WAIT_S: u64 = 60;

/// The tool as clients see it.
pub fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "tool_name": {"type": "string", "description": "The tool that wants to run, e.g. Bash."},
            "input": {"type": "object", "description": "The tool's arguments."},
            "tool_use_id": {"type": "string", "description": "The id of this tool call."},
            "cwd": {"type": "string", "description": "Optional: the working directory, shown to the person."},
            "wait_s": {"type": "integer", "minimum": 1, "description": "Optional: how long to wait for the person (default 900)."}
        },
        "required": ["tool_name"]
    });
    let Value::Object(schema) = schema else {
        unreachable!("a schema is an object")
    };
    Tool::new(
        NAME,
        "Ask the user whether a tool call may run (a permission prompt): they get a \
notification and tap Allow or Deny on their phone. Answers with Claude Code's permission \
JSON: {\"behavior\":\"allow\",\"updatedInput\":{…}} or {\"behavior\":\"deny\",\"message\":\"…\"}. \
No answer in time is a deny.",
        Arc::new(schema),
    )
    .with_title("Ask the user to allow a tool call")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .open_world(false),
    )
}

impl SaysoMcp {
    /// Runs `approve` for `inbox`; always a permission JSON text, never an error.
    pub(super) async fn approve(&self, inbox: &Inbox, args: &super::Arguments) -> CallToolResult {
        let answer = match self.ask_approval(inbox, args).await {
            Ok(answer) => answer,
            Err(reason) => deny(&format!("sayso: {reason}; denied")),
        };
        CallToolResult::success(vec![ContentBlock::text(answer.to_string())])
    }

    async fn ask_approval(&self, inbox: &Inbox, args: &super::Arguments) -> Result<Value, String> {
        let tool_name = match args.get("tool_name") {
            Some(Value::String(t)) if !t.trim().is_empty() => t.trim(),
            _ => return Err("approve needs tool_name, a string".into()),
        };
        let input = match args.get("input") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err("approve's input must be an object".into()),
        };
        let text = |k: &str| args.get(k).and_then(Value::as_str);
        let wait_s = match args.get("wait_s") {
            None | Some(Value::Null) => DEFAULT_WAIT_S,
            Some(v) => v
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or("approve's wait_s must be a whole number of seconds")?,
        };
        let wait = Duration::from_secs(wait_s);
        let project = text("cwd").and_then(project_of);
        let call = ToolCallRef {
            harness: "claude",
            tool_name,
            tool_input: &input,
            cwd: text("cwd"),
            project: project.as_deref(),
            session_id: None,
            tool_use_id: text("tool_use_id"),
            // Claude Code runs the `updatedInput` it is handed.
            editable: true,
        };
        let answer_by = (OffsetDateTime::now_utc() + wait)
            .format(&Rfc3339)
            .unwrap_or_default();
        let body = create_body(&call, &answer_by, wait_s + OPEN_AFTER_WAIT_S);
        // No idempotency key: a call made again (after a client timeout) asks again, rather
        // than failing on its new `answer_by`.
        let created = self
            .svc
            .create_decision(inbox, &body, None)
            .await
            .map_err(describe)?;
        let id = created.handle.decision_id;
        let waited = self.await_own(inbox, id, wait).await;
        if !matches!(&waited, Ok(d) if d.status != Status::Pending) {
            // The answer is a deny now: nothing is left waiting for the person's.
            let _ = self.abandon(inbox, id).await;
        }
        let d = waited.map_err(|f| match f {
            super::Failure::Service(e) => describe(e),
            super::Failure::Invalid(_) => "the answer could not be read".into(),
            super::Failure::Waiting(refused) => {
                format!("not waiting for the person: {}", refused.message())
            }
        })?;
        let remark = d.remark.as_deref().map(str::trim).filter(|r| !r.is_empty());
        Ok(
            match (d.status, d.outcome.as_ref().and_then(Value::as_str)) {
                (Status::Answered, Some(ALLOW | ALLOW_SESSION)) => {
                    let mut input = input;
                    if d.custom
                        && let Some(command) = self.edited_command(inbox, d.id).await
                    {
                        input["command"] = json!(command);
                    }
                    json!({"behavior": "allow", "updatedInput": input})
                }
                (Status::Answered | Status::Declined, _) => deny(&match remark {
                    Some(r) => format!("The person denied this on sayso: {r}"),
                    None => "The person denied this on sayso.".into(),
                }),
                (Status::Pending, _) => {
                    let minutes = if wait_s % 60 == 0 {
                        format!("{} min", wait_s / 60)
                    } else {
                        format!("{wait_s} s")
                    };
                    // No link: the reason reaches the model.
                    deny(&format!(
                        "sayso: no answer in {minutes}; the question is withdrawn; denied"
                    ))
                }
                (status, _) => deny(&format!(
                    "sayso: the question was {} without an answer; denied",
                    status.as_str()
                )),
            },
        )
    }
}

impl SaysoMcp {
    /// The command the person edited before allowing, from the `answered` event.
    async fn edited_command(&self, inbox: &Inbox, id: uuid::Uuid) -> Option<String> {
        let events = self.svc.decision_events(inbox, id).await.ok()?;
        events
            .iter()
            .rev()
            .find_map(|e| e.detail["edited_command"].as_str().map(str::to_string))
    }
}

fn deny(message: &str) -> Value {
    json!({"behavior": "deny", "message": message})
}

fn describe(e: ServiceError) -> String {
    match e {
        ServiceError::Validation(issues) => {
            let parts: Vec<String> = issues
                .iter()
                .map(|i| format!("{}: {}", i.path, i.message))
                .collect();
            format!("the approval is not valid ({})", parts.join("; "))
        }
        ServiceError::Unavailable => "sayso's database is unavailable".into(),
        other => {
            tracing::error!(error = %other, "approve failed");
            "something went wrong on the sayso server".into()
        }
    }
}
