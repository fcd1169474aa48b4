//! The profiles' ask tools (src/mcp/profiles): each checks the call as its tool does,
//! asks through the service with the decision's shape recorded, waits, and words the result
//! as its tool does; a wait that ends first says how to keep waiting.

use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::Value;

use super::handler::{DEFAULT_WAIT_S, SaysoMcp};
use super::profiles::answers::{Asked, notes_of};
use super::profiles::{self, Worded, claude, gemini, omp, pi};
use super::results::{Failure, checked_body, push_warnings, rfc3339, seconds, to_json};
use super::tools::Arguments;
use crate::domain::inbox::Inbox;
use crate::domain::spec::Shape;
use crate::domain::{Decision, Issues, Status};
use crate::service::view::AskHandle;

impl SaysoMcp {
    /// oh-my-pi's `ask`.
    pub(super) async fn omp_ask(
        &self,
        inbox: &Inbox,
        args: Arguments,
    ) -> Result<CallToolResult, Failure> {
        let wait = wait_s(&args)?;
        let timeout = self.omp_timeout;
        let body = match omp::create_body(&args, timeout) {
            Ok(body) => body,
            Err(w) => return Ok(w.into_result()),
        };
        let wait = omp::wait(wait, timeout);
        self.ask_in_shape(inbox, body, Shape::Omp, wait, waiting_text)
            .await
    }

    /// gemini-cli's `ask_user`.
    pub(super) async fn gemini_ask(
        &self,
        inbox: &Inbox,
        args: Arguments,
    ) -> Result<CallToolResult, Failure> {
        let wait = wait_s(&args)?;
        if let Err(w) = gemini::check(&args) {
            return Ok(w.into_result());
        }
        let body = gemini::create_body(&args);
        self.ask_in_shape(inbox, body, Shape::Gemini, wait, waiting_text)
            .await
    }

    /// Claude Code's `AskUserQuestion` (`ask_user_question` on `/mcp`, with its `wait_s`).
    pub(super) async fn claude_ask(
        &self,
        inbox: &Inbox,
        args: Arguments,
    ) -> Result<CallToolResult, Failure> {
        let wait = wait_s(&args)?;
        if let Err(w) = claude::check(&args) {
            return Ok(w.into_result());
        }
        if let Some(w) = claude::given_answers(&args) {
            return Ok(w.into_result());
        }
        let body = claude::create_body(&args);
        self.ask_in_shape(inbox, body, Shape::Claude, wait, waiting_text)
            .await
    }

    /// pi's `ask_user`.
    pub(super) async fn pi_ask(
        &self,
        inbox: &Inbox,
        args: Arguments,
    ) -> Result<CallToolResult, Failure> {
        let wait = wait_s(&args)?;
        let body = match pi::create_body(&args) {
            Ok(body) => body,
            Err(w) => return Ok(w.into_result()),
        };
        self.ask_in_shape(inbox, body, Shape::Pi, wait, pi::pending)
            .await
    }

    /// Creates the decision in `shape`, waits up to `wait` and returns the tool's result, or
    /// `pending`'s text (with the handle as structured content) if the person has not
    /// answered by then.
    async fn ask_in_shape(
        &self,
        inbox: &Inbox,
        body: Value,
        shape: Shape,
        wait: Duration,
        pending: fn(&AskHandle) -> String,
    ) -> Result<CallToolResult, Failure> {
        let body = checked_body(body)?;
        let created = self
            .svc
            .create_shaped(inbox, &body, None, Some(shape))
            .await?;
        let mut h = created.handle;
        // Asked, but not allowed to wait: the question stands, and the result says so. A
        // wait that ends with the handle in the result leaves it open too (the model may
        // await it); only a client that gave up on the call has it withdrawn.
        let d = match self.await_own(inbox, h.decision_id, wait).await {
            Err(Failure::Waiting(refused)) => {
                h.warnings
                    .push(format!("not waiting for the answer: {}", refused.message()));
                self.svc.get_decision(inbox, h.decision_id).await?
            }
            other => other?,
        };
        if d.status != Status::Pending {
            return self.decision_result(inbox, &d).await;
        }
        let mut text = pending(&h);
        push_warnings(&mut text, &h.warnings);
        let view = self.svc.view(&d).await?;
        Ok(Worded::ok(text, Some(to_json(&view))).into_result())
    }

    /// A decision as its asker reads it: a resolved decision asked in a tool's shape is that
    /// tool's result; anything else is sayso's sentence (and, while pending, how to wait).
    pub(super) async fn decision_result(
        &self,
        inbox: &Inbox,
        d: &Decision,
    ) -> Result<CallToolResult, Failure> {
        if let Some(shape) = d.spec.shape
            && d.status != Status::Pending
        {
            let notes = match d.status {
                Status::Answered => notes_of(&self.svc.decision_events(inbox, d.id).await?),
                _ => Default::default(),
            };
            let asked = Asked {
                decision: d,
                notes: &notes,
            };
            return Ok(profiles::word(shape, &asked).into_result());
        }
        let view = self.svc.view(d).await?;
        Ok(super::results::decision_result(&view))
    }
}

/// How long the call waits for the person: sayso's `wait_s` (every profile takes it,
/// though only `/mcp` lists it), else `DEFAULT_WAIT_S`.
fn wait_s(args: &Arguments) -> Result<Duration, Failure> {
    let mut issues = Issues::new();
    let wait = seconds(args, "wait_s", &mut issues);
    issues.finish(()).map_err(Failure::Invalid)?;
    Ok(Duration::from_secs(wait.unwrap_or(DEFAULT_WAIT_S)))
}

/// The usual text when the person has not answered within the call's wait.
/// What a harness's ask tool says when the wait ends first. The question's link stays out:
/// the person has it from their notifications and feed, and a model holding it could answer
/// its own question.
fn waiting_text(h: &AskHandle) -> String {
    format!(
        "The user has not answered yet (decision_id \"{id}\"; they can answer until {}). \
         Call await_decision with decision_id \"{id}\" to wait for the answers.",
        rfc3339(h.expires_at),
        id = h.decision_id,
    )
}
