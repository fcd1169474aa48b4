//! Putting a tool call to the person through the sayso server, and reading the answer.
//! Everything here is bounded by the hook's deadline; whatever goes wrong comes back as an
//! `Err` with a one-line reason, which the caller turns into the safe fallback.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::time::Instant;
use uuid::Uuid;

use super::abandon::{Guard, Watch, withdraw_now};
use super::allowance::{Standing, record_use, session_allowed, standing_allowance};
use super::call::ToolCall;
use super::policy::{People, Ruling};
use super::reply::Verdict;
use super::{CREATE_WINDOW, request_timeout};
use crate::client::abandon::WITHDRAW_WITHIN;
use crate::client::args::NotifyArg;
use crate::client::http::{Api, Failure};
use crate::client::wait::wait_for_decision;
use crate::domain::approval::{ALLOW, ALLOW_SESSION, DENY, MAX_RULE_CHARS};
use crate::domain::receipt::PublicKey;
use crate::render::approval;

/// How long the question stays open past the hook's wait should withdrawing it fail (the
/// server unreachable right then): long enough for the withdrawal to arrive first, short
/// enough that no answer can come long after nothing waits for it.
const OPEN_AFTER_WAIT: Duration = Duration::from_secs(60);
/// How long past the deadline the wait may take to come back with the decision pending.
const WAIT_GRACE: Duration = Duration::from_secs(2);

/// What a reason says of the question once the hook stops waiting (a reason reaches the
/// model: never a link, which would let it answer).
const WITHDRAWN: &str = "the question is withdrawn";
/// What it says when the withdrawal did not get through (the guard keeps trying).
const CLOSES_SOON: &str = "the question closes within a minute";

/// Why the person's answer could not be had.
#[derive(Debug, Clone, PartialEq)]
pub struct NoAnswer {
    /// One line, for stderr and the reason the harness shows.
    pub reason: String,
}

/// What is put to the person: the agent's call, or a command the person edited that the
/// policy wants confirmed by its own rule (edit.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// The agent's call; the person may edit its command.
    Call,
    /// The person's own edit, put again under the rule that decides it: shown as it is,
    /// never edited again, and never covered by an "Allow for this session".
    Edit,
}

/// Asks the person and waits up to `wait`, for what `asking` says; `Ok` is the person's
/// verdict. Whenever it stops waiting without one (its deadline, the harness giving up on
/// it, an error), the question is withdrawn as abandoned: nothing would act on an answer
/// given later. With a pinned receipt key, an Allow counts only with its receipt
/// (receipt.rs).
pub async fn ask(
    api: &Api,
    call: &ToolCall,
    wait: Duration,
    notify: Option<NotifyArg>,
    ruling: &Ruling,
    key: Option<&PublicKey>,
    asking: Asking,
) -> Result<Verdict, NoAnswer> {
    let deadline = Instant::now() + wait;
    // From here on a harness giving up on the hook is noticed, its signals included.
    let mut watch = Watch::start();
    // Guards on each step: nothing below may outlive the deadline, whatever a server does.
    let asked = tokio::time::timeout_at(
        deadline,
        put_question(api, call, deadline, notify, ruling, key, asking),
    );
    tokio::pin!(asked);
    let asked = tokio::select! {
        asked = &mut asked => asked,
        why = watch.stopped() => {
            // The create is most often a moment from coming back: waiting that moment lets
            // the hook withdraw the question itself and say so. Past it, the guard does.
            return Err(match tokio::time::timeout(WITHDRAW_WITHIN, asked).await {
                Ok(Ok(Ok(Asked::Handle(mut handle)))) => {
                    let guard = handle.guard.take();
                    withdrawn(api, &handle.id, guard, why).await
                }
                _ => NoAnswer { reason: why },
            });
        }
    };
    let mut handle = match asked {
        Ok(Ok(Asked::Handle(handle))) => handle,
        Ok(Ok(Asked::Standing(a))) => {
            return Ok(Verdict::allow(format!(
                "A standing allowance on sayso let this through: {} allowed {} until {}.",
                a.by, call.tool_name, a.until
            )));
        }
        Ok(Ok(Asked::AllowedForSession)) => {
            return Ok(Verdict::allow(format!(
                "The person allowed {} for this session on sayso.",
                call.tool_name
            )));
        }
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            return Err(NoAnswer {
                reason: format!("no answer from sayso in {}", words(wait)),
            });
        }
    };
    let guard = handle.guard.take();
    let answered = tokio::select! {
        answered = answer(api, call, &handle, deadline, wait, key, asking) => answered,
        why = watch.stopped() => Err(NoAnswer { reason: why }),
    };
    match answered {
        Ok(verdict) => {
            if let Some(g) = guard {
                g.settled();
            }
            Ok(verdict)
        }
        Err(no) => Err(withdrawn(api, &handle.id, guard, no.reason).await),
    }
}

/// Withdraws question `id` that nothing waits for any more, and says so after `why`.
async fn withdrawn(api: &Api, id: &str, guard: Option<Guard>, why: String) -> NoAnswer {
    // Once; the guard tries longer should this fail (and is told when it need not).
    let then = if withdraw_now(api, id).await {
        if let Some(g) = guard {
            g.settled();
        }
        WITHDRAWN
    } else {
        CLOSES_SOON
    };
    NoAnswer {
        reason: format!("{why}; {then}"),
    }
}

/// Waits for the person's answer to decision `id` until the deadline, and reads it.
async fn answer(
    api: &Api,
    call: &ToolCall,
    handle: &Handle,
    deadline: Instant,
    wait: Duration,
    key: Option<&PublicKey>,
    asking: Asking,
) -> Result<Verdict, NoAnswer> {
    let id = handle.id.as_str();
    let remaining = deadline.saturating_duration_since(Instant::now());
    // The await returns the decision still pending at the deadline; the guard, a moment
    // later, is for a server that stops answering.
    let waited = tokio::time::timeout_at(
        deadline + WAIT_GRACE,
        wait_for_decision(api, id, Some(remaining), handle.expires_at),
    );
    match waited.await {
        Ok(Ok(d)) => {
            let mut verdict = verdict_of(&d, call, wait)?;
            let allowed = matches!(verdict, Verdict::Allow { .. });
            let signed = match key {
                Some(key) if allowed => {
                    let checked = tokio::time::timeout_at(
                        deadline + WAIT_GRACE,
                        super::receipt::checked(
                            api,
                            id,
                            key,
                            Some(handle.asked_sha256.as_deref().unwrap_or_default()),
                            deadline + WAIT_GRACE,
                        ),
                    )
                    .await
                    .unwrap_or_else(|_| Err("no receipt in time".to_string()))
                    .map_err(|reason| NoAnswer { reason })?;
                    // What the receipt says is what counts: it may not be the Allow the
                    // unsigned decision claimed.
                    verdict = verdict_of(&checked.as_decision(), call, wait)?;
                    Some(checked)
                }
                _ => None,
            };
            if let Some(checked) = &signed {
                if let Verdict::Allow { updated_input, .. } = &mut verdict
                    && asking == Asking::Call
                    && call.as_ref().editable
                    && call.command().is_some()
                    && let Some(command) = &checked.receipt.edited_command
                {
                    let mut input = call.tool_input.clone();
                    input["command"] = Value::from(command.as_str());
                    *updated_input = Some(input);
                }
            } else if let Verdict::Allow { updated_input, .. } = &mut verdict
                && asking == Asking::Call
                && call.as_ref().editable
                && call.command().is_some()
            {
                // The person may have edited the command (the decision still reads as their
                // Allow; the command is in its `answered` event): the harness runs that one,
                // or nothing.
                let edited = tokio::time::timeout_at(
                    deadline + WAIT_GRACE,
                    edited_input(api, call, id, deadline),
                );
                match edited.await {
                    Ok(Ok(Some(input))) => *updated_input = Some(input),
                    Ok(Ok(None)) => {}
                    _ => {
                        return Err(NoAnswer {
                            reason: "the person edited the command, but it could not be read"
                                .to_string(),
                        });
                    }
                }
            }
            Ok(verdict)
        }
        Ok(Err(e)) => Err(NoAnswer {
            reason: first_line(&e),
        }),
        Err(_) => Err(NoAnswer {
            reason: format!("no answer in {}", words(wait)),
        }),
    }
}

/// What asking gave: the decision's id, expiry and the hash its receipt must carry for what
/// was asked, an earlier "for this session", or a standing allowance.
enum Asked {
    Handle(Handle),
    AllowedForSession,
    Standing(Standing),
}

/// The question the server holds: its id, expiry, the hash its receipt must carry for what
/// was asked, and its guard.
struct Handle {
    id: String,
    expires_at: Option<OffsetDateTime>,
    asked_sha256: Option<String>,
    guard: Option<Guard>,
}

async fn put_question(
    api: &Api,
    call: &ToolCall,
    deadline: Instant,
    notify: Option<NotifyArg>,
    ruling: &Ruling,
    key: Option<&PublicKey>,
    asking: Asking,
) -> Result<Asked, NoAnswer> {
    let failed = |e: crate::client::http::Failure| NoAnswer {
        reason: first_line(&e),
    };
    // An "Allow for this session" was one person's tap: a rule that wants a passkey or names
    // who must agree asks every time, and an allowance counts only for calls the same rule
    // decides (so one given where no rule matched never covers a call a rule of its own
    // gates).
    if let Some(session) = &call.session_id
        && asking == Asking::Call
        && ruling.session_answer_allowed()
        && session_allowed(api, call, session, ruling.rule.as_deref(), deadline, key)
            .await
            .map_err(failed)?
    {
        return Ok(Asked::AllowedForSession);
    }
    // A standing allowance ("Allow for 15 min", …) passes under the same conditions, for the
    // calls of its exact scope, once the server has recorded this use of it. One that cannot
    // be read, or whose use cannot be recorded, is as none: the person is asked.
    if ruling.session_answer_allowed()
        && let Some(standing) =
            standing_allowance(api, call, ruling.rule.as_deref(), deadline, key).await
    {
        match record_use(api, call, ruling.rule.as_deref(), &standing, deadline).await {
            Ok(()) => return Ok(Asked::Standing(standing)),
            Err(why) => eprintln!(
                "sayso: a standing allowance covers this call, but its use could not be \
                 recorded ({why}); asking the person"
            ),
        }
    }
    // The question is open for as long as the hook still waits.
    let wait = deadline.saturating_duration_since(Instant::now());
    let answer_by = (OffsetDateTime::now_utc() + wait)
        .format(&Rfc3339)
        .unwrap_or_default();
    let mut body = create_body(call, &answer_by, wait);
    if let Some(n) = notify {
        body["notify"] = Value::from(n.as_str());
    }
    shape_for_ruling(&mut body, ruling);
    if asking == Asking::Edit {
        shape_for_edit(&mut body);
    }
    let key = match &call.tool_use_id {
        // Per event too: a harness with both PreToolUse and PermissionRequest hooks sends
        // the same call twice, with another answer_by.
        Some(id) if asking == Asking::Call => {
            format!("hook-{}-{}-{id}", call.harness.as_str(), call.event)
        }
        Some(id) => format!("hook-{}-{}-{id}-edit", call.harness.as_str(), call.event),
        None => Uuid::new_v4().to_string(),
    };
    // From the moment the create may reach the server, a guard stands by: however the hook
    // stops (this future dropped at a signal or the deadline, or the process killed), it
    // finds the question by its key and withdraws it.
    let mut guard = Guard::start(api);
    if let Some(g) = &mut guard {
        g.creating(&key, &body);
    }
    let url = api.url(&["v1", "decisions"]);
    let sent = api
        .send(
            || {
                api.request(Method::POST, url.clone(), request_timeout(deadline))
                    .header("Idempotency-Key", &key)
                    .json(&body)
            },
            (Instant::now() + CREATE_WINDOW).min(deadline),
        )
        .await;
    let handle = match sent {
        Ok(handle) => handle,
        Err(e) => {
            // Refused outright: no question was made. Anything else (no answer, a broken
            // connection) may have made one, which the guard then withdraws.
            if let Failure::Refused { status, .. } = &e
                && status.is_client_error()
                && let Some(g) = guard
            {
                g.settled();
            }
            return Err(failed(e));
        }
    };
    let id = handle["decision_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(g) = &mut guard {
        g.created(&id);
    }
    let expires_at = handle["expires_at"]
        .as_str()
        .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok());
    let asked_sha256 = super::receipt::asked_sha256(&body);
    Ok(Asked::Handle(Handle {
        id,
        expires_at,
        asked_sha256,
        guard,
    }))
}

/// What the ruling adds to the approval: the rule that put it (shown to the person, and
/// matched by a later call's session lookup), the passkey its Allow needs (the server holds
/// to it), its people, and no "Allow for this session" where the rule rules one out. The
/// hook looks up allowances before it asks wherever the ruling lets one stand, and says so:
/// only then does the page offer "Allow for a while".
fn shape_for_ruling(body: &mut Value, ruling: &Ruling) {
    body["approval"]["honours_allowances"] = Value::from(ruling.session_answer_allowed());
    if let Some(rule) = &ruling.rule {
        body["approval"]["rule"] =
            Value::from(rule.chars().take(MAX_RULE_CHARS).collect::<String>());
    }
    if let Some(s) = ruling.step_up {
        body["approval"]["step_up"] = Value::from(s.as_str());
    }
    if !ruling.session_answer_allowed()
        && let Some(options) = body["options"].as_array_mut()
    {
        options.retain(|o| o != ALLOW_SESSION);
    }
    add_people(body, &ruling.people);
}

/// The person's edit put again: the command exactly as they wrote it, with no text box (what
/// they confirm is what runs) and no "Allow for this session"; the question says whose
/// command it is.
fn shape_for_edit(body: &mut Value) {
    body["approval"]["editable"] = Value::from(false);
    body["approval"]["honours_allowances"] = Value::from(false);
    if let Some(options) = body["options"].as_array_mut() {
        options.retain(|o| o != ALLOW_SESSION);
    }
    if let Some(q) = body["question"].as_str() {
        body["question"] = Value::from(format!("Your edit, asked again by its policy rule. {q}"));
    }
}

/// The policy rule names who is asked and how many must Allow; the server asks only them and
/// holds the approval until enough have (any Deny ends it).
fn add_people(body: &mut Value, people: &People) {
    if !people.approvers.is_empty() {
        body["approvers"] = Value::from(people.approvers.clone());
    }
    if let Some(n) = people.required {
        body["required"] = Value::from(n);
    }
}

fn first_line(e: &crate::client::http::Failure) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// The create request of the call's approval.
pub fn create_body(call: &ToolCall, answer_by: &str, wait: Duration) -> Value {
    let ttl = (wait + OPEN_AFTER_WAIT).as_secs();
    approval::create_body(&call.as_ref(), answer_by, ttl)
}

/// The verdict a resolved (or still pending) decision gives.
fn verdict_of(d: &Value, call: &ToolCall, wait: Duration) -> Result<Verdict, NoAnswer> {
    let remark = d["remark"]
        .as_str()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    let status = d["status"].as_str().unwrap_or_default();
    match (status, d["outcome"].as_str()) {
        ("answered", Some(ALLOW)) => Ok(Verdict::allow(with_remark(
            "The person allowed this on sayso.",
            remark,
        ))),
        ("answered", Some(ALLOW_SESSION)) => Ok(Verdict::allow(with_remark(
            &format!(
                "The person allowed {} for this session on sayso.",
                call.tool_name
            ),
            remark,
        ))),
        ("answered", Some(DENY)) | ("declined", _) => Ok(Verdict::deny(match remark {
            Some(r) => format!("The person denied this on sayso: {r}"),
            None => "The person denied this on sayso.".to_string(),
        })),
        ("pending", _) => Err(NoAnswer {
            reason: format!("no answer in {}", words(wait)),
        }),
        (other, _) => Err(NoAnswer {
            reason: format!("the question was {other} without an answer"),
        }),
    }
}

/// The call's input with the command the person edited before allowing, read from the
/// decision's `answered` event: `Ok(None)` when they left it as it was, `Err` when the
/// events cannot be read (then nothing may run).
async fn edited_input(
    api: &Api,
    call: &ToolCall,
    id: &str,
    deadline: Instant,
) -> Result<Option<Value>, ()> {
    let url = api.url(&["v1", "decisions", id, "events"]);
    let events = api
        .send(
            || api.request(Method::GET, url.clone(), request_timeout(deadline)),
            (Instant::now() + CREATE_WINDOW).min(deadline + WAIT_GRACE),
        )
        .await
        .map_err(|_| ())?;
    let items = events["items"].as_array().ok_or(())?;
    let Some(command) = items
        .iter()
        .rev()
        .find_map(|e| e["detail"]["edited_command"].as_str())
    else {
        return Ok(None);
    };
    let mut input = call.tool_input.clone();
    input["command"] = Value::from(command);
    Ok(Some(input))
}

fn with_remark(text: &str, remark: Option<&str>) -> String {
    match remark {
        Some(r) => format!("{text} Remark: {r}"),
        None => text.to_string(),
    }
}

/// A wait as people say it: "15 min", "40 s".
pub fn words(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::call::Harness;
    use serde_json::json;

    fn bash() -> ToolCall {
        ToolCall {
            harness: Harness::Claude,
            event: "PreToolUse".into(),
            tool_name: "Bash".into(),
            tool_input: json!({"command": "rm -rf build/", "description": "clean"}),
            cwd: Some("/home/me/shop".into()),
            project: Some("/home/me/shop".into()),
            session_id: Some("s1".into()),
            tool_use_id: Some("toolu_1".into()),
        }
    }

    #[test]
    fn the_rules_approvers_go_with_the_question() {
        let c = bash();
        let mut body = create_body(&c, "2026-11-25T08:00:00Z", Duration::from_secs(60));
        add_people(&mut body, &People::default());
        assert!(body.get("approvers").is_none() && body.get("required").is_none());
        add_people(
            &mut body,
            &People {
                approvers: vec!["ana".into(), "ben".into()],
                required: Some(2),
            },
        );
        assert_eq!(body["approvers"], json!(["ana", "ben"]));
        assert_eq!(body["required"], 2);
        assert_eq!(body["approval"]["tool_name"], "Bash");
    }

    #[test]
    fn answers_become_verdicts() {
        let c = bash();
        let w = Duration::from_secs(900);
        let d = json!({"status": "answered", "outcome": "Allow", "remark": null});
        assert_eq!(verdict_of(&d, &c, w).unwrap().word(), "allow");
        let d = json!({"status": "answered", "outcome": "Deny", "remark": "use make clean"});
        assert_eq!(
            verdict_of(&d, &c, w).unwrap(),
            Verdict::deny("The person denied this on sayso: use make clean")
        );
        let d = json!({"status": "pending", "web_url": "http://x/d/1"});
        assert_eq!(
            verdict_of(&d, &c, w).unwrap_err().reason,
            "no answer in 15 min"
        );
        let d = json!({"status": "expired", "outcome": null, "web_url": "http://x/d/1"});
        let reason = verdict_of(&d, &c, w).unwrap_err().reason;
        assert!(!reason.contains("http"), "{reason}");
    }
}
