//! Claude Code's `Elicitation` hook: an MCP server asks the person something in the middle
//! of a tool call (MCP `elicitation/create`). Under `claude -p` nobody is at the terminal and
//! the question would be cancelled; the hook puts it to the person as a sayso question and
//! hands their answer back in the three words of the MCP spec:
//!
//! - `accept`: they answered (a form's `content`, typed as the server's schema says), or
//!   accepted to open the server's page (URL mode);
//! - `decline`: they said no;
//! - `cancel`: no answer could be had (nobody answered in time, the question expired or was
//!   cancelled, the server could not be reached), or the question could not be shown
//!   faithfully. With `--fallback ask` those print nothing instead, and Claude Code shows its
//!   own dialog.
//!
//! Claude Code reads `{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": …,
//! "content": …}}` on stdout (exit 0). What the server sends is untrusted: its message and
//! field labels are shown as text, never as Markdown, the question says whose it is and that
//! it is no tool approval, a URL is shown in full for the person to open themselves, and the
//! answer counts only when it came from the person's own side (their feed, a notification,
//! their mail): never from the agent's key, nor from the question's `web_url`, which the key
//! can read.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Map, Value, json};
use tokio::time::Instant;
use uuid::Uuid;

use super::call::text;
use super::reply::Reply;
use super::{CREATE_WINDOW, Fallback, HookArgs};
use crate::client::http::{Api, Failure};
use crate::client::wait::wait_for_decision;
use crate::domain::AnswerChannel;
use crate::domain::Issues;
use crate::domain::form_schema::{PROPERTY_KEYWORDS, parse_form_schema, type_keywords};
use crate::domain::receipt::PublicKey;
use crate::render::approval::fenced;
use crate::render::visible::{Lines, visible};

mod shown;

/// The event's `hook_event_name`.
pub const EVENT: &str = "Elicitation";

/// The longest server message shown: a longer one is not cut (the person would answer what
/// they did not read), it is handed back.
const MAX_MESSAGE_CHARS: usize = 8_000;
/// The longest server name shown in the question.
const MAX_SERVER_CHARS: usize = 100;
/// The longest URL an attachment takes (docs/API.md, `attachments`).
const MAX_LINK_CHARS: usize = 2_000;
/// The longest attachment name; a longer URL is linked under a name pointing at it.
const MAX_LINK_NAME_CHARS: usize = 200;
/// How long the question outlives the hook's wait, should the hook be killed before it
/// cancels it: its answer could no longer reach the server.
const OPEN_AFTER_WAIT: Duration = Duration::from_secs(60);
/// How long past the wait the closing steps (cancel, read back) may take.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// Root keywords of a requested schema: what sayso's form takes, and annotations that
/// constrain nothing (a root `title` and `description` are shown with the message).
const ROOT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "title",
    "description",
    "$schema",
    "additionalProperties",
];

/// Whether the harness's input is an elicitation.
pub fn is_elicitation(input: &Value) -> bool {
    input["hook_event_name"] == EVENT
}

/// One elicitation, as Claude Code hands it over.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// The MCP server's name in Claude Code's configuration.
    pub server: String,
    pub message: String,
    pub mode: Mode,
    pub elicitation_id: Option<String>,
    pub cwd: Option<String>,
}

/// What the server asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Fields to fill in, under the MCP flat schema as sent.
    Form(Value),
    /// A page of the server's to open.
    Url(String),
}

/// What goes back to the MCP server.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Accept(Option<Map<String, Value>>),
    Decline,
    Cancel,
}

/// Reads the hook's stdin JSON.
pub fn parse(v: &Value) -> Result<Elicitation, String> {
    let server = text(v, "mcp_server_name").ok_or("mcp_server_name is missing")?;
    let message = text(v, "message").unwrap_or_default();
    let mode = match v["mode"].as_str().unwrap_or("form") {
        "form" => Mode::Form(match &v["requested_schema"] {
            Value::Null => return Err("requested_schema is missing".into()),
            schema => schema.clone(),
        }),
        "url" => Mode::Url(text(v, "url").ok_or("url is missing (mode \"url\")")?),
        other => return Err(format!("mode {other:?} is not \"form\" or \"url\"")),
    };
    Ok(Elicitation {
        server,
        message,
        mode,
        elicitation_id: text(v, "elicitation_id"),
        cwd: text(v, "cwd"),
    })
}

/// The action in Claude Code's words.
pub fn reply(action: &Action) -> Reply {
    let mut out = Map::new();
    out.insert("hookEventName".into(), json!(EVENT));
    let word = match action {
        Action::Accept(_) => "accept",
        Action::Decline => "decline",
        Action::Cancel => "cancel",
    };
    out.insert("action".into(), json!(word));
    if let Action::Accept(Some(content)) = action {
        out.insert("content".into(), Value::Object(content.clone()));
    }
    Reply::json(json!({ "hookSpecificOutput": out }))
}

/// Answers one elicitation: asks the person and prints what they said, or the fallback.
pub async fn answer(input: &Value, args: &HookArgs) -> Reply {
    let e = match parse(input) {
        Ok(e) => e,
        Err(why) => return fallback(args.fallback, &why),
    };
    let wait = Duration::from_secs(args.timeout_s);
    let body = create_body(&e, wait);
    if args.explain {
        match &body {
            Ok(_) => println!(
                "ask the person: the MCP server {} asks a question (no policy rule applies)",
                quoted(&e.server)
            ),
            Err(why) => println!("hand back: {why}"),
        }
        return Reply::nothing();
    }
    let mut body = match body {
        Ok(b) => b,
        Err(why) => return fallback(args.fallback, &why),
    };
    if let Some(n) = args.notify {
        body["notify"] = Value::from(n.as_str());
    }
    let api = match Api::new(&args.server.server, args.server.key.as_deref()) {
        Ok(api) => api.quiet(),
        Err(e) => return fallback(args.fallback, &e.to_string()),
    };
    // A pinned key that cannot be read is a refusal, never "no key".
    let key = match super::receipt_key(args) {
        Ok(key) => key,
        Err(why) => return fallback(args.fallback, &why),
    };
    match ask(&api, &e, &body, wait, key.as_ref()).await {
        Ok(action) => reply(&action),
        Err(why) => fallback(args.fallback, &why),
    }
}

/// The safe answer when the person's cannot be had: `cancel` (nobody decided), or nothing
/// printed so that Claude Code asks at the terminal; one line on stderr says why.
fn fallback(fallback: Fallback, why: &str) -> Reply {
    match fallback {
        Fallback::Deny => {
            eprintln!("sayso: {why}; the elicitation is cancelled");
            reply(&Action::Cancel)
        }
        Fallback::Ask => {
            eprintln!("sayso: {why}; asking here instead");
            Reply::nothing()
        }
    }
}

/// Puts the question, waits for the person, and reads their answer; with a pinned receipt
/// key, from the receipt of the very question put (`answered_from_receipt`).
async fn ask(
    api: &Api,
    e: &Elicitation,
    body: &Value,
    wait: Duration,
    key: Option<&PublicKey>,
) -> Result<Action, String> {
    let deadline = Instant::now() + wait;
    // A key of its own, never the server's `elicitation_id`: a server that sends an id again
    // must not get an earlier answer back without the person being asked.
    let idempotency = Uuid::new_v4().to_string();
    let url = api.url(&["v1", "decisions"]);
    let handle = api
        .send(
            || {
                api.request(Method::POST, url.clone(), until(deadline))
                    .header("Idempotency-Key", &idempotency)
                    .json(body)
            },
            (Instant::now() + CREATE_WINDOW).min(deadline),
        )
        .await
        .map_err(|f| first_line(&f))?;
    let id = handle["decision_id"]
        .as_str()
        .ok_or("the server's answer holds no decision_id")?
        .to_string();
    let remaining = deadline.saturating_duration_since(Instant::now());
    let waited = tokio::time::timeout_at(
        deadline + CLOSE_GRACE,
        wait_for_decision(api, &id, Some(remaining), None),
    )
    .await;
    let d = match waited {
        Ok(Ok(d)) if d["status"] != "pending" => d,
        // Nobody answered in time: the question is closed, so that an answer cannot come
        // after the server was told "cancel". An answer that got in first still counts.
        _ => {
            let d = close(api, &id, deadline + CLOSE_GRACE).await?;
            if d["status"] == "cancelled" {
                return Err(format!("no answer in {}", super::ask::words(wait)));
            }
            d
        }
    };
    match key {
        Some(key) => {
            answered_from_receipt(api, &id, &d, e, body, key, deadline + CLOSE_GRACE).await
        }
        None => action_of(&d, e),
    }
}

/// With a pinned receipt key, the answer that goes back to the MCP server (an `accept` and
/// its content, or a `decline`) is read from the receipt that key signed, for the question
/// this hook put (its `asked_sha256`), never from the unsigned decision: something between
/// the hook and sayso cannot make up an answer, change its content, or hand over another
/// question's. A question the server says ended without an answer is `cancel`, which needs
/// no receipt: it is what the hook answers when it has none.
async fn answered_from_receipt(
    api: &Api,
    id: &str,
    d: &Value,
    e: &Elicitation,
    body: &Value,
    key: &PublicKey,
    give_up: Instant,
) -> Result<Action, String> {
    if matches!(d["status"].as_str(), Some("expired" | "cancelled")) {
        return Ok(Action::Cancel);
    }
    let asked = super::receipt::asked_sha256(body)
        .ok_or("the question the hook put cannot be read back to check its receipt")?;
    let checked = tokio::time::timeout_at(
        give_up,
        super::receipt::checked(api, id, key, Some(&asked), give_up),
    )
    .await
    .unwrap_or_else(|_| Err("no receipt in time".to_string()))
    .map_err(|why| format!("{why}; the answer is not taken"))?;
    action_of(&checked.as_decision(), e)
}

/// Cancels the question and reads it back as it ended (answered first, or cancelled now).
async fn close(api: &Api, id: &str, give_up: Instant) -> Result<Value, String> {
    let cancel = api.url(&["v1", "decisions", id, "cancel"]);
    let body = json!({"reason": "the MCP server's question was not answered in time"});
    // A 409 (resolved first) is expected; whatever it was, the read below says how it ended.
    let _ = api
        .send(
            || {
                api.request(Method::POST, cancel.clone(), until(give_up))
                    .json(&body)
            },
            give_up,
        )
        .await;
    let get = api.url(&["v1", "decisions", id]);
    api.send(
        || api.request(Method::GET, get.clone(), until(give_up)),
        give_up,
    )
    .await
    .map_err(|f| {
        format!(
            "no answer in time, and the question could not be read: {}",
            first_line(&f)
        )
    })
}

/// The action a decision that ended gives. An answer counts only from the person's own
/// side; anything else ended without their word and is `cancel`.
pub fn action_of(d: &Value, e: &Elicitation) -> Result<Action, String> {
    let status = d["status"].as_str().unwrap_or_default();
    let by_person = d["answered_by"]["channel"]
        .as_str()
        .and_then(AnswerChannel::parse)
        .is_some_and(AnswerChannel::is_person_side);
    match status {
        "answered" | "declined" if !by_person => Err(format!(
            "the question was {status} through {}, not by the person; the elicitation is cancelled",
            d["answered_by"]["channel"]
                .as_str()
                .unwrap_or("an unknown way")
        )),
        "declined" => Ok(Action::Decline),
        "answered" => match (&e.mode, &d["outcome"]) {
            (Mode::Url(_), Value::Bool(true)) => Ok(Action::Accept(None)),
            (Mode::Url(_), Value::Bool(false)) => Ok(Action::Decline),
            (Mode::Form(_), Value::Object(content)) => Ok(Action::Accept(Some(content.clone()))),
            (_, other) => Err(format!("the answer {other} is not one this question takes")),
        },
        // Expired or cancelled: the person made no choice.
        "expired" | "cancelled" => Ok(Action::Cancel),
        "pending" => Err("no answer in time".into()),
        other => Err(format!("the question ended as {other:?}")),
    }
}

/// The create request of the question, or why it cannot be asked faithfully.
pub fn create_body(e: &Elicitation, wait: Duration) -> Result<Value, String> {
    if e.message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(format!(
            "the MCP server's message is longer than {MAX_MESSAGE_CHARS} characters"
        ));
    }
    let server = cut(&e.server, MAX_SERVER_CHARS);
    let mut context = format!(
        "**A question from an MCP server, not a tool approval.** Claude Code is running a \
         tool of the MCP server {}, and the server asks you this. What you answer goes to \
         that server alone; declining is always safe.\n\nIts message, in its own words:\n\n{}",
        quoted(&server),
        fenced(
            "text",
            &if e.message.trim().is_empty() {
                "(no message)".to_string()
            } else {
                visible(&e.message, Lines::Kept)
            }
        ),
    );
    let ttl = (wait + OPEN_AFTER_WAIT).as_secs().clamp(10, 2_592_000);
    let mut body = json!({
        "context_md": "",
        "ttl_seconds": ttl,
        "allow_remark": false,
        // Named people answer only through their own links, never the `web_url` the
        // agent's key can read: one person of the inbox answers for all.
        "required": 1,
        "metadata": {"elicitation": {
            "mcp_server": server,
            "elicitation_id": e.elicitation_id.as_deref().map(|id| cut(id, 200)),
        }},
    });
    match &e.mode {
        Mode::Form(schema) => {
            let mut form = map_schema(schema)?;
            shown::visible_labels(&mut form)?;
            for key in ["title", "description"] {
                if let Some(t) = schema[key].as_str().filter(|t| !t.trim().is_empty()) {
                    context.push_str(&format!(
                        "The form's {key}:\n\n{}",
                        fenced("text", &visible(t, Lines::Kept))
                    ));
                }
            }
            body["question"] = json!(format!(
                "The MCP server {} asks you to fill in a form",
                quoted(&server)
            ));
            body["kind"] = json!("form");
            body["schema"] = form;
        }
        Mode::Url(raw) => {
            let url = shown::page_url(raw)?;
            context.push_str(&shown::page_section(&url));
            context.push_str(
                "Accept tells the server you open it yourself; Decline tells it you will not.\n",
            );
            body["question"] = json!(format!(
                "The MCP server {} asks you to open a web page on {}",
                quoted(&server),
                visible(&shown::site(&url), Lines::Marked)
            ));
            body["kind"] = json!("bool");
            body["yes_label"] = json!("Accept");
            body["no_label"] = json!("Decline");
            let has_userinfo = shown::has_userinfo(&url);
            let url = url.to_string();
            if url.chars().count() <= MAX_LINK_CHARS {
                let name = if url.chars().count() <= MAX_LINK_NAME_CHARS && !has_userinfo {
                    url.clone()
                } else {
                    "The address above".to_string()
                };
                body["attachments"] = json!([{"name": name, "url": url}]);
            }
        }
    }
    if let Some(p) = e.cwd.as_deref().and_then(super::project::project_of) {
        body["project"] = json!(p);
    }
    // A mark of this asking alone, in what the receipt signs (docs/SECURITY.md, Receipts):
    // an answer to an earlier question worded the same is not an answer to this one.
    let mark = Uuid::new_v4().simple().to_string();
    context.push_str(&format!(
        "\nAsked by the sayso hook as question {}.\n",
        &mark[..12]
    ));
    body["context_md"] = json!(context);
    Ok(body)
}

/// The MCP requested schema as sayso's form schema (docs/API.md), or why it cannot be put
/// faithfully: a keyword sayso's form does not hold to (a `pattern`, an exclusive bound, a
/// format it does not know…), something it refuses, or anything it would ignore with a
/// warning. Such a question is handed back rather than asked without its rule.
pub fn map_schema(schema: &Value) -> Result<Value, String> {
    let Value::Object(root) = schema else {
        return Err("the requested schema is not a JSON object".into());
    };
    only(root, ROOT_KEYWORDS, "requested_schema")?;
    if let Some(extra) = root.get("additionalProperties")
        && !extra.is_boolean()
    {
        return Err(
            "requested_schema.additionalProperties is a schema; only true or false can be shown"
                .into(),
        );
    }
    if let Some(Value::Object(properties)) = root.get("properties") {
        for (name, property) in properties {
            check_property(property, &format!("requested_schema.properties.{name}"))?;
        }
    }
    let mut form = Map::new();
    for key in ["type", "properties", "required"] {
        if let Some(v) = root.get(key) {
            form.insert(key.into(), v.clone());
        }
    }
    let form = Value::Object(form);
    let mut issues = Issues::new();
    let mut warnings = Vec::new();
    let parsed = parse_form_schema(&form, "requested_schema", &mut issues, &mut warnings);
    if let Some(i) = issues.into_vec().into_iter().next() {
        return Err(format!("{} {}", i.path, i.message));
    }
    if let Some(w) = warnings.into_iter().next() {
        return Err(w);
    }
    parsed.ok_or("the requested schema holds no form")?;
    Ok(form)
}

/// The keywords a property may have for its type; a property that is not an object, or has
/// no type sayso knows, is left to the form's own check to name.
fn check_property(property: &Value, path: &str) -> Result<(), String> {
    let Value::Object(p) = property else {
        return Ok(());
    };
    let Some(own) = p
        .get("type")
        .and_then(Value::as_str)
        .and_then(type_keywords)
    else {
        return Ok(());
    };
    let allowed: Vec<&str> = PROPERTY_KEYWORDS.iter().chain(own).copied().collect();
    only(p, &allowed, path)?;
    if p.contains_key("enum") && p.contains_key("oneOf") {
        return Err(format!("{path} has both enum and oneOf"));
    }
    if let Some(Value::Object(items)) = p.get("items") {
        let items_path = format!("{path}.items");
        only(items, &["type", "enum", "enumNames", "anyOf"], &items_path)?;
        if items.contains_key("enum") && items.contains_key("anyOf") {
            return Err(format!("{items_path} has both enum and anyOf"));
        }
        if items.contains_key("anyOf") && items.contains_key("type") {
            return Err(format!("{items_path} has both type and anyOf"));
        }
    }
    Ok(())
}

/// Refuses the first keyword not in `allowed`.
fn only(obj: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "{path} keyword {} cannot be shown on a sayso form",
            quoted(&cut(k, 100))
        )),
        None => Ok(()),
    }
}

/// Text in double quotes, with quotes, backslashes and control characters escaped.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// At most `max` characters, marked when cut.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// A request may take until just past `at`; the guard around it ends it first.
fn until(at: Instant) -> Duration {
    at.saturating_duration_since(Instant::now()) + Duration::from_secs(1)
}

fn first_line(f: &Failure) -> String {
    f.to_string().lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests;
