//! The client commands: build the request from the flags, send it, print the result.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use reqwest::Method;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::time::Instant;
use uuid::Uuid;

use super::abandon::{StopSignals, WITHDRAW_WITHIN, withdraw};
use super::args::{AskArgs, AwaitArgs, CancelArgs, CreateArgs, GetArgs, PeopleArgs, TodoArgs};
use super::flags::{flag_of, option_value, problems, refusal, usage};
use super::http::Api;
use super::wait::{EXIT_GONE, EXIT_YES, exit_code, outcome_summary, wait_for_decision};

/// How long a single request (not a wait) keeps retrying a server that answered once and
/// then cannot be reached or answers 502/503/504 (one never reached is given up on in 3 s).
pub(super) const RETRY_WINDOW: Duration = Duration::from_secs(30);
/// How long `ask --wait` (without `--timeout`) keeps retrying its create.
const WAIT_CREATE_WINDOW: Duration = Duration::from_secs(300);
/// How long a create or a read may take once sent (a create may carry a 5 MiB image).
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// `sayso ask`.
pub async fn ask(args: Box<AskArgs>) -> anyhow::Result<u8> {
    let api = Api::new(
        &args.common.server.server,
        args.common.server.key.as_deref(),
    )?;
    let body = ask_body(&args)?;
    let found = problems(&body, args.common.ttl, "the question");
    if !found.is_empty() {
        return Err(refusal(found));
    }
    let wait = args.wait.then_some(Wait {
        timeout: args.timeout,
        keep: args.keep,
    });
    create_and_report(&api, body, &args.common, wait).await
}

/// `sayso todo`.
pub async fn todo(args: TodoArgs) -> anyhow::Result<u8> {
    let api = Api::new(
        &args.common.server.server,
        args.common.server.key.as_deref(),
    )?;
    let mut body = Map::new();
    body.insert("question".into(), json!(args.text));
    body.insert("kind".into(), json!("todo"));
    if let Some(context) = &args.context {
        body.insert("context_md".into(), json!(context));
    }
    if !args.approvers.is_empty() {
        body.insert("approvers".into(), json!(args.approvers));
    }
    add_common(&mut body, &args.common);
    let body = Value::Object(body);
    let found = problems(&body, args.common.ttl, "the to-do's text");
    if !found.is_empty() {
        return Err(refusal(found));
    }
    create_and_report(&api, body, &args.common, None).await
}

/// `sayso get`: the whole decision, as the API returns it.
pub async fn get(args: GetArgs) -> anyhow::Result<u8> {
    let api = Api::new(&args.server.server, args.server.key.as_deref())?;
    let url = api.url(&["v1", "decisions", &args.id]);
    let d = api
        .send(
            || api.request(Method::GET, url.clone(), REQUEST_TIMEOUT),
            Instant::now() + RETRY_WINDOW,
        )
        .await?;
    println!("{d}");
    Ok(EXIT_YES)
}

/// `sayso await`: the outcome, and its exit code.
pub async fn await_decision(args: AwaitArgs) -> anyhow::Result<u8> {
    let api = Api::new(&args.server.server, args.server.key.as_deref())?;
    let d = wait_for_decision(&api, &args.id, args.timeout, None).await?;
    println!("{}", outcome_summary(&d));
    Ok(exit_code(&d))
}

/// `sayso cancel`: prints the outcome (now `cancelled`).
pub async fn cancel(args: CancelArgs) -> anyhow::Result<u8> {
    let api = Api::new(&args.server.server, args.server.key.as_deref())?;
    let url = api.url(&["v1", "decisions", &args.id, "cancel"]);
    let body = match &args.reason {
        Some(reason) => json!({ "reason": reason }),
        None => json!({}),
    };
    let d = api
        .send(
            || {
                api.request(Method::POST, url.clone(), REQUEST_TIMEOUT)
                    .json(&body)
            },
            Instant::now() + RETRY_WINDOW,
        )
        .await?;
    println!("{}", outcome_summary(&d));
    Ok(EXIT_YES)
}

/// How `ask --wait` waits.
struct Wait {
    timeout: Option<Duration>,
    /// Leave the question open when the wait is interrupted.
    keep: bool,
}

/// Creates the decision (safely retried under its idempotency key), prints the handle, and
/// with `wait` waits for the outcome.
async fn create_and_report(
    api: &Api,
    body: Value,
    common: &CreateArgs,
    wait: Option<Wait>,
) -> anyhow::Result<u8> {
    let timeout = wait.as_ref().and_then(|w| w.timeout);
    // Listening before the create: an interrupt from here on withdraws the question.
    let mut stops = match &wait {
        Some(w) if !w.keep => StopSignals::listen(),
        _ => None,
    };
    // A key of our own when none is given: a create retried after a lost answer then
    // returns the first decision instead of asking the person twice.
    let idempotency_key = common
        .idempotency_key
        .clone()
        .unwrap_or_else(|| Uuid::new_v4().to_string());
    let url = api.url(&["v1", "decisions"]);
    // A waiting script is patient with a server that is restarting; a plain ask is not.
    let window = match (&wait, timeout) {
        (None, _) => RETRY_WINDOW,
        (Some(_), Some(t)) => t,
        (Some(_), None) => WAIT_CREATE_WINDOW,
    };
    let give_up = Instant::now() + window;
    let item = if body["kind"] == "todo" {
        "the to-do's text"
    } else {
        "the question"
    };
    let created = api.send(
        || {
            api.request(Method::POST, url.clone(), REQUEST_TIMEOUT)
                .header("Idempotency-Key", &idempotency_key)
                .json(&body)
        },
        give_up,
    );
    let created = match &mut stops {
        None => created.await,
        Some(stops) => tokio::select! {
            created = created => created,
            name = stops.next() => anyhow::bail!("{name}: stopped before the question was asked"),
        },
    };
    let handle = created.map_err(|f| f.renamed(|path| flag_of(path, item)))?;
    if let Some(warnings) = handle["warnings"].as_array() {
        for w in warnings {
            eprintln!("sayso: warning: {}", w.as_str().unwrap_or_default());
        }
    }
    let id = handle["decision_id"]
        .as_str()
        .context("the server's answer has no decision_id")?
        .to_string();
    let web_url = handle["web_url"].as_str().unwrap_or_default();
    if wait.is_none() {
        if common.json {
            println!("{handle}");
        } else {
            let what = if body["kind"] == "todo" {
                "to-do"
            } else {
                "decision"
            };
            let expires = handle["expires_at"]
                .as_str()
                .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok())
                .map_or("?".to_string(), |t| common.zone.zone().date_time(t));
            println!("{what} {id} (expires {expires}); the answer link:\n{web_url}");
        }
        return Ok(EXIT_YES);
    }
    // stdout is for the outcome; the link goes where a person watching will see it.
    eprintln!("sayso: waiting for the answer to decision {id}:\n{web_url}");
    let expires_at = handle["expires_at"]
        .as_str()
        .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok());
    let waited = wait_for_decision(api, &id, timeout, expires_at);
    let d = match &mut stops {
        None => waited.await?,
        Some(stops) => tokio::select! {
            d = waited => d?,
            name = stops.next() => return withdraw_on_stop(api, &id, name).await,
        },
    };
    println!("{}", outcome_summary(&d));
    Ok(exit_code(&d))
}

/// `ask --wait` interrupted: nothing waits for the answer any more, so the question is
/// withdrawn (as abandoned: the person's page says the agent stopped waiting).
async fn withdraw_on_stop(api: &Api, id: &str, signal: &str) -> anyhow::Result<u8> {
    match withdraw(api, id, WITHDRAW_WITHIN).await {
        Ok(()) => {
            eprintln!("sayso: {signal}: stopped waiting; decision {id} is withdrawn");
            Ok(EXIT_GONE)
        }
        Err(e) => Err(anyhow::anyhow!(
            "{signal}: stopped waiting; decision {id} could not be withdrawn: {e}"
        )),
    }
}

/// The create body of `sayso ask`: only what was given, so the server's defaults apply.
fn ask_body(args: &AskArgs) -> anyhow::Result<Value> {
    let mut body = Map::new();
    body.insert("question".into(), json!(args.question));
    body.insert("kind".into(), json!(args.kind.as_str()));
    if !args.options.is_empty() {
        let options: Vec<Value> = args.options.iter().map(|o| option_value(o)).collect();
        body.insert("options".into(), Value::Array(options));
    }
    if args.multi {
        body.insert("multi".into(), json!(true));
    }
    let optional = [
        ("recommended", args.recommended.map(|n| json!(n))),
        ("yes_label", args.yes_label.as_ref().map(|s| json!(s))),
        ("no_label", args.no_label.as_ref().map(|s| json!(s))),
        ("placeholder", args.placeholder.as_ref().map(|s| json!(s))),
        ("callback_url", args.callback_url.as_ref().map(|s| json!(s))),
        (
            "default_outcome",
            args.default.as_deref().map(json_or_string),
        ),
    ];
    for (name, value) in optional {
        if let Some(v) = value {
            body.insert(name.into(), v);
        }
    }
    let mut context = args.context.clone();
    if let Some(path) = &args.context_file {
        let text = read_text(path)?;
        context = Some(match context {
            Some(c) => format!("{c}\n\n{text}"),
            None => text,
        });
    }
    if let Some(c) = context {
        body.insert("context_md".into(), json!(c));
    }
    if let Some(path) = &args.schema_file {
        let text = read_text(path)?;
        // What the file holds is the flag's value: a mistake in it is the command line's.
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| usage(format!("--schema-file {} is not JSON: {e}", path.display())))?;
        match v {
            Value::Object(_) => body.insert("schema".into(), v),
            Value::Array(_) => body.insert("questions".into(), v),
            _ => {
                return Err(usage(format!(
                    "--schema-file {} must hold a JSON Schema object or a list of questions",
                    path.display()
                )));
            }
        };
    }
    add_people(&mut body, &args.people);
    add_common(&mut body, &args.common);
    Ok(Value::Object(body))
}

/// Who is asked and how many must agree: only what was given, so a plain ask stays one the
/// whole inbox answers.
fn add_people(body: &mut Map<String, Value>, people: &PeopleArgs) {
    if !people.approvers.is_empty() {
        body.insert("approvers".into(), json!(people.approvers));
    }
    if let Some(n) = people.required {
        body.insert("required".into(), json!(n));
    }
    if let Some(after) = people.escalate_after {
        body.insert("escalate_after_s".into(), json!(after.as_secs()));
    }
    if !people.escalate_to.is_empty() {
        body.insert("escalate_to".into(), json!(people.escalate_to));
    }
    if people.urgent {
        body.insert("urgent".into(), json!(true));
    }
}

/// The fields `ask` and `todo` share.
fn add_common(body: &mut Map<String, Value>, common: &CreateArgs) {
    if let Some(project) = &common.project {
        body.insert("project".into(), json!(project));
    }
    if let Some(ttl) = common.ttl {
        let secs = ttl.as_secs();
        // Whole minutes read as the API's usual unit; anything finer goes as seconds.
        if secs.is_multiple_of(60) {
            body.insert("ttl_minutes".into(), json!(secs / 60));
        } else {
            body.insert("ttl_seconds".into(), json!(secs));
        }
    }
    if let Some(notify) = common.notify {
        body.insert("notify".into(), json!(notify.as_str()));
    }
}

/// `--default true` is the boolean, `--default Blue` the string "Blue".
fn json_or_string(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// A file's text; `-` is stdin.
fn read_text(path: &Path) -> anyhow::Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Only {
        #[command(flatten)]
        ask: AskArgs,
    }

    fn body(args: &[&str]) -> Value {
        let only = Only::try_parse_from(std::iter::once("ask").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{e}"));
        ask_body(&only.ask).unwrap()
    }

    #[test]
    fn only_the_flags_given_are_sent() {
        assert_eq!(
            body(&["Deploy?", "--kind", "bool"]),
            json!({"question": "Deploy?", "kind": "bool"})
        );
    }

    #[test]
    fn flags_become_create_fields() {
        let b = body(&[
            "Which?",
            "--kind",
            "choose",
            "--option",
            "A",
            "--option",
            "B",
            "--multi",
            "--recommended",
            "1",
            "--context",
            "**why**",
            "--ttl",
            "90s",
            "--notify",
            "none",
            "--project",
            "web",
            "--default",
            "[\"A\"]",
            "--callback-url",
            "https://example.com/hook",
        ]);
        assert_eq!(
            b,
            json!({
                "question": "Which?", "kind": "choose", "options": ["A", "B"], "multi": true,
                "recommended": 1, "callback_url": "https://example.com/hook",
                "default_outcome": ["A"], "context_md": "**why**", "project": "web",
                "ttl_seconds": 90, "notify": "none"
            })
        );
        assert_eq!(
            body(&["Q", "--kind", "bool", "--ttl", "2h"])["ttl_minutes"],
            120
        );
        assert_eq!(
            body(&["Q", "--kind", "choose", "--default", "Blue"])["default_outcome"],
            "Blue"
        );
    }

    #[test]
    fn people_flags_become_routing_fields() {
        let b = body(&[
            "Ship?",
            "--kind",
            "bool",
            "--approvers",
            "ana,ben",
            "--approvers",
            "cy",
            "--required",
            "2",
            "--escalate-after",
            "10m",
            "--escalate-to",
            "dee",
            "--urgent",
        ]);
        assert_eq!(b["approvers"], json!(["ana", "ben", "cy"]));
        assert_eq!(b["required"], 2);
        assert_eq!(b["escalate_after_s"], 600);
        assert_eq!(b["escalate_to"], json!(["dee"]));
        assert_eq!(b["urgent"], true);
    }

    #[test]
    fn bad_people_flags_are_refused_before_anything_is_sent() {
        let parse = |args: &[&str]| {
            Only::try_parse_from(std::iter::once("ask").chain(args.iter().copied()))
                .err()
                .map(|e| e.to_string())
        };
        let base = ["Ship?", "--kind", "bool"];
        let with = |extra: &[&str]| parse(&[&base[..], extra].concat());
        let e = with(&["--required", "0"]).expect("refused");
        assert!(e.contains("--required") && e.contains("1..=50"), "{e}");
        let e = with(&["--approvers", "Ana"]).expect("refused");
        assert!(e.contains("not a person's name"), "{e}");
        let e = with(&["--escalate-to", "cy"]).expect("refused");
        assert!(e.contains("--escalate-after"), "{e}");
        let e = with(&["--escalate-after", "0s"]).expect("refused");
        assert!(e.contains("no time at all"), "{e}");
        assert!(with(&["--approvers", "ana"]).is_none());
    }

    #[test]
    fn a_schema_file_is_a_schema_or_a_list_of_questions() {
        let dir = std::env::temp_dir();
        let schema = dir.join(format!("sayso-schema-{}.json", Uuid::new_v4()));
        std::fs::write(&schema, r#"{"type":"object","properties":{}}"#).unwrap();
        let questions = dir.join(format!("sayso-questions-{}.json", Uuid::new_v4()));
        std::fs::write(&questions, r#"[{"question":"Name?"}]"#).unwrap();
        let b = body(&[
            "F",
            "--kind",
            "form",
            "--schema-file",
            schema.to_str().unwrap(),
        ]);
        assert_eq!(b["schema"]["type"], "object");
        let b = body(&[
            "F",
            "--kind",
            "form",
            "--schema-file",
            questions.to_str().unwrap(),
        ]);
        assert_eq!(b["questions"][0]["question"], "Name?");
        let _ = std::fs::remove_file(schema);
        let _ = std::fs::remove_file(questions);
    }
}
