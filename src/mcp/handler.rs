//! The MCP server: each tool call becomes one service call for the request's inbox, and its
//! result a text for the model plus the JSON the HTTP API would return.

use std::time::Duration;

use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

pub(super) mod approve;

use super::profiles::{self, Profile, claude, gemini, omp, pi};
use super::results::{
    Failure, checked_body, checked_id, decision_id, decision_result, only_decision_id,
    push_warnings, result, rfc3339, routed_to, seconds, to_json, tool_error,
};
use super::tools::{self, Arguments};
use crate::domain::inbox::Inbox;
use crate::domain::{CancelReason, Issues, Kind, Status};
use crate::service::{ListQuery, Service, ServiceError};
use crate::web::waiting::Seats;

/// How long the ask tools that wait in the call (`ask_user_question` and the profiles')
/// wait by default: below the tool-call timeouts of common MCP clients.
pub const DEFAULT_WAIT_S: u64 = 50;

/// How long `await_decision` waits by default, as the hosted `ask` tool documents it.
pub const DEFAULT_AWAIT_S: u64 = 600;

/// sayso's tools, served for the inbox of each request's API key, in one profile's shape.
#[derive(Clone)]
pub struct SaysoMcp {
    pub(super) svc: Service,
    profile: Profile,
    /// oh-my-pi's `ask.timeout` (`SAYSO_OMP_ASK_TIMEOUT_S`); `None` waits for the person.
    pub(super) omp_timeout: Option<Duration>,
}

impl SaysoMcp {
    /// `/mcp`'s tools.
    pub fn new(svc: Service) -> Self {
        Self::with_profile(svc, Profile::Hosted, None)
    }

    /// The tools of `profile`'s endpoint.
    pub fn with_profile(svc: Service, profile: Profile, omp_timeout: Option<Duration>) -> Self {
        SaysoMcp {
            svc,
            profile,
            omp_timeout: omp_timeout.filter(|t| !t.is_zero()),
        }
    }

    /// Runs one tool for `inbox`. Every failure the model can act on is a tool error (a result
    /// with `isError`) whose text says what to do; only an unknown tool is a protocol error.
    pub async fn call(
        &self,
        inbox: &Inbox,
        name: &str,
        args: Arguments,
    ) -> Result<CallToolResult, ErrorData> {
        let result = match (self.profile, name) {
            (Profile::Omp, omp::TOOL) => self.omp_ask(inbox, args).await,
            (Profile::Gemini, gemini::TOOL) => self.gemini_ask(inbox, args).await,
            (Profile::Claude, claude::TOOL) => self.claude_ask(inbox, args).await,
            (Profile::Pi, pi::TOOL) => self.pi_ask(inbox, args).await,
            (_, tools::GET_DECISION) => self.get_decision(inbox, &args).await,
            (_, tools::AWAIT_DECISION) => self.await_decision(inbox, &args).await,
            (_, tools::CANCEL_DECISION) => self.cancel_decision(inbox, &args).await,
            (Profile::Hosted, tools::ASK_USER) => self.ask_user(inbox, args).await,
            (Profile::Hosted, tools::LIST_TODOS) => self.list_todos(inbox, &args).await,
            (Profile::Hosted, claude::HOSTED_TOOL) => self.claude_ask(inbox, args).await,
            (Profile::Hosted, approve::NAME) => return Ok(self.approve(inbox, &args).await),
            (_, other) => {
                return Err(ErrorData::invalid_params(
                    format!("there is no tool named {other:?}"),
                    None,
                ));
            }
        };
        let result = result.unwrap_or_else(tool_error);
        Ok(match self.profile {
            Profile::Claude | Profile::Omp => profiles::text_only(result),
            _ => result,
        })
    }

    async fn ask_user(
        &self,
        inbox: &Inbox,
        mut args: Arguments,
    ) -> Result<CallToolResult, Failure> {
        let key = match args.remove("idempotency_key") {
            None | Some(Value::Null) => None,
            Some(Value::String(k)) => Some(k),
            Some(_) => return Err(Failure::invalid("idempotency_key", "must be a string")),
        };
        let body = checked_body(Value::Object(args))?;
        let created = self
            .svc
            .create_decision(inbox, &body, key.as_deref())
            .await?;
        let h = &created.handle;
        let expires = rfc3339(h.expires_at);
        let mut text = if body.get("kind").and_then(Value::as_str) == Some(Kind::Todo.as_str()) {
            format!(
                "Added the to-do to the user's feed (decision_id \"{}\", expires at {expires}). \
                 Nothing needs awaiting: the user marks it done or skipped; list_todos shows the \
                 open ones.",
                h.decision_id
            )
        } else if let Some((who, rule)) = routed_to(&body) {
            // A decision sent to people by name is answered from their own side only: its
            // web_url shows it and refuses answers.
            format!(
                "Asked {who} (decision_id \"{}\"){rule}; they answer from their sayso feed or \
                 a notification before {expires}. Call await_decision with this decision_id to \
                 wait for the answer.",
                h.decision_id
            )
        } else {
            format!(
                "Asked the user (decision_id \"{}\"); they answer at {} before {expires}. Call \
                 await_decision with this decision_id to wait for the answer.",
                h.decision_id, h.web_url
            )
        };
        if created.replayed {
            text.push_str(" This idempotency_key was used before: this is the first request's handle, the user was not asked again.");
        }
        push_warnings(&mut text, &h.warnings);
        Ok(result(text, to_json(h)))
    }

    async fn get_decision(
        &self,
        inbox: &Inbox,
        args: &Arguments,
    ) -> Result<CallToolResult, Failure> {
        let id = only_decision_id(args)?;
        let d = self.svc.get_decision(inbox, id).await?;
        self.decision_result(inbox, &d).await
    }

    async fn await_decision(
        &self,
        inbox: &Inbox,
        args: &Arguments,
    ) -> Result<CallToolResult, Failure> {
        let mut issues = Issues::new();
        let id = decision_id(args, &mut issues);
        let timeout = seconds(args, "timeout_s", &mut issues);
        let id = checked_id(issues, id)?;
        let wait = Duration::from_secs(timeout.unwrap_or(DEFAULT_AWAIT_S));
        let d = self.await_in_rounds(inbox, id, wait).await?;
        self.decision_result(inbox, &d).await
    }

    /// Waits the whole of `wait`, in rounds of the server's longest single await, so a
    /// `timeout_s` above that maximum is honoured rather than cut short; a shutdown ends it.
    /// The wait takes a seat (web/waiting.rs); without one it only looks, and a decision
    /// still pending is `Failure::Waiting`.
    pub(super) async fn await_in_rounds(
        &self,
        inbox: &Inbox,
        id: Uuid,
        wait: Duration,
    ) -> Result<crate::domain::Decision, Failure> {
        let seat = match wait.is_zero() {
            true => Ok(None),
            false => SEATS
                .try_with(|seats| seats.take(inbox))
                .unwrap_or(Ok(None)),
        };
        let _seat = match seat {
            Ok(seat) => seat,
            Err(refused) => {
                let d = self.svc.await_decision(inbox, id, Duration::ZERO).await?;
                return match d.status {
                    Status::Pending => Err(Failure::Waiting(refused)),
                    _ => Ok(d),
                };
            }
        };
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let d = self.svc.await_decision(inbox, id, left).await?;
            if d.status != Status::Pending || left.is_zero() || self.svc.is_shutting_down() {
                return Ok(d);
            }
        }
    }

    /// Waits like `await_in_rounds` for a decision this call created and has not handed
    /// to the client yet. If the client gives up on the call (`notifications/cancelled`,
    /// its connection or the stdio bridge gone), nothing can act on an answer any more:
    /// the decision is withdrawn as abandoned, and the person's page says so.
    pub(super) async fn await_own(
        &self,
        inbox: &Inbox,
        id: Uuid,
        wait: Duration,
    ) -> Result<crate::domain::Decision, Failure> {
        let cancelled = CANCELLED.try_with(Clone::clone).unwrap_or_default();
        tokio::select! {
            d = self.await_in_rounds(inbox, id, wait) => d,
            () = cancelled.cancelled() => self.abandon(inbox, id).await,
        }
    }

    /// Withdraws a decision nothing waits for any more; one resolved already stays as it is.
    pub(super) async fn abandon(
        &self,
        inbox: &Inbox,
        id: Uuid,
    ) -> Result<crate::domain::Decision, Failure> {
        let reason = Some(CancelReason::Abandoned.as_str().to_string());
        match self.svc.cancel_decision(inbox, id, reason).await {
            Ok(d) => Ok(d),
            Err(ServiceError::AlreadyResolved(d) | ServiceError::Expired(d)) => Ok(*d),
            Err(e) => Err(e.into()),
        }
    }

    async fn cancel_decision(
        &self,
        inbox: &Inbox,
        args: &Arguments,
    ) -> Result<CallToolResult, Failure> {
        let mut issues = Issues::new();
        let id = decision_id(args, &mut issues);
        let reason = crate::domain::decision::cancel_reason(args.get("reason"), &mut issues);
        let id = checked_id(issues, id)?;
        // The agent withdrew it: sayso's own sentence, not the asking tool's cancel error.
        let d = self.svc.cancel_decision(inbox, id, reason).await?;
        let view = self.svc.view(&d).await?;
        Ok(decision_result(&view))
    }

    async fn list_todos(&self, inbox: &Inbox, args: &Arguments) -> Result<CallToolResult, Failure> {
        let project = match args.get("project") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(p.trim().to_string()).filter(|p| !p.is_empty()),
            Some(_) => return Err(Failure::invalid("project", "must be a string")),
        };
        let page = self
            .svc
            .list_decisions(
                inbox,
                ListQuery {
                    status: Some(Status::Pending),
                    kind: Some(Kind::Todo),
                    project,
                    limit: 200,
                    cursor: None,
                },
            )
            .await?;
        let text = if page.items.is_empty() {
            "There are no open to-dos.".to_string()
        } else {
            let lines: Vec<String> = page
                .items
                .iter()
                .map(|d| {
                    let project = d
                        .project
                        .as_deref()
                        .map(|p| format!(", project \"{p}\""))
                        .unwrap_or_default();
                    format!(
                        "- \"{}\" (decision_id \"{}\"{project}, expires at {})",
                        d.question,
                        d.decision_id,
                        rfc3339(d.expires_at)
                    )
                })
                .collect();
            let more = if page.next.is_some() {
                "\n(More older to-dos are not listed.)"
            } else {
                ""
            };
            format!(
                "{} open to-do(s), newest first:\n{}{more}",
                page.items.len(),
                lines.join("\n")
            )
        };
        Ok(result(text, to_json(&page)))
    }
}

impl ServerHandler for SaysoMcp {
    fn get_info(&self) -> ServerConfig {
        server_config(self.profile)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::of(self.profile)))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::of(self.profile).into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<Parts>();
        // Put there by the API-key middleware in front of `/mcp`.
        let inbox = parts
            .and_then(|parts| parts.extensions.get::<Inbox>())
            .cloned()
            .ok_or_else(|| ErrorData::internal_error("the request carries no inbox", None))?;
        let seats = parts
            .map(|parts| Seats::of(&parts.extensions))
            .unwrap_or_default();
        let args = request.arguments.unwrap_or_default();
        let call = CANCELLED.scope(context.ct, self.call(&inbox, &request.name, args));
        SEATS.scope(seats, call).await.map(Into::into)
    }
}

/// What sayso says about itself to a client connecting to `profile`'s endpoint.
pub fn server_config(profile: Profile) -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        .with_server_info(Implementation::new("sayso", env!("CARGO_PKG_VERSION")))
        .with_instructions(tools::instructions(profile))
}

tokio::task_local! {
    /// Where the waits of the tool call being run take their seats: read from the request
    /// once, around the call, rather than handed down through every tool that may wait.
    static SEATS: Seats;
    /// Cancelled when the client gives up on the tool call being run: its
    /// `notifications/cancelled`, or its connection closed (rmcp cancels a stateless
    /// request whose client went away).
    static CANCELLED: CancellationToken;
}
