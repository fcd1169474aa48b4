//! The whole input, always, on every screen. Each test is an attack: a tool input whose
//! readable rendering (a URL, a file write, an edit, a command) leaves out a field that
//! changes what runs, put through the real `sayso hook claude`. Every field must be on the
//! approval page, the session page, the ntfy message and the Web Push; a notification offers
//! Allow in one tap only when it shows every field, and a page only once it shows all of them.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::checks::assert_fit_for_a_phone;
use crate::common::browser::Browser;
use crate::common::db::fresh_sqlite_url;
use crate::common::receiver::Receiver;
use crate::common::server::{TestServer, open_feed};
use crate::notify::push_notice_for;
use crate::run::{Dir, finish, hook_command, pending_decision, server, start};

/// One attack: the tool, its input, the fields its readable rendering leaves out (path,
/// value), the tool's name as the title must say it, and whether a notification that shows
/// all of it may offer Allow in one tap.
struct Case {
    tool: &'static str,
    input: Value,
    fields: &'static [(&'static str, &'static str)],
    title: &'static str,
    one_tap: bool,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            tool: "mcp__puppeteer__puppeteer_navigate",
            input: json!({"url": "https://example.com",
                          "launchOptions": {"executablePath": "/bin/sh"}}),
            fields: &[("launchOptions.executablePath", "/bin/sh")],
            title: "Claude Code wants to fetch a web page with \
                    mcp__puppeteer__puppeteer_navigate (MCP server puppeteer)",
            one_tap: true,
        },
        Case {
            tool: "mcp__github__create_or_update_file",
            input: json!({"path": "README.md", "content": "hello\n", "owner": "acme",
                          "repo": "payments", "branch": "main", "message": "Update README"}),
            fields: &[
                ("owner", "acme"),
                ("repo", "payments"),
                ("branch", "main"),
                ("message", "Update README"),
            ],
            title: "Claude Code wants to write a file with mcp__github__create_or_update_file \
                    (MCP server github)",
            one_tap: false,
        },
        Case {
            tool: "mcp__ssh__edit_file",
            input: json!({"file_path": "/etc/nginx/nginx.conf", "old_string": "listen 80;",
                          "new_string": "listen 8080;", "host": "prod-db-1.internal"}),
            fields: &[("host", "prod-db-1.internal")],
            title: "Claude Code wants to edit a file with mcp__ssh__edit_file (MCP server ssh)",
            one_tap: false,
        },
        Case {
            tool: "mcp__http__request",
            input: json!({"url": "https://api.example.com/v1/users", "method": "DELETE",
                          "body": "{\"all\": true}"}),
            fields: &[("method", "DELETE"), ("body", "{\"all\": true}")],
            title: "Claude Code wants to fetch a web page with mcp__http__request \
                    (MCP server http)",
            one_tap: true,
        },
        Case {
            tool: "Edit",
            input: json!({"file_path": "/srv/app/config.py", "old_string": "DEBUG = False",
                          "new_string": "DEBUG = True", "replace_all": true}),
            fields: &[("replace_all", "true")],
            title: "Claude Code wants to edit a file with Edit",
            one_tap: false,
        },
        Case {
            tool: "Bash",
            input: json!({"command": "make test", "description": "Run the tests",
                          "dangerouslyDisableSandbox": true}),
            fields: &[("dangerouslyDisableSandbox", "true")],
            title: "Claude Code wants to run a Bash command",
            one_tap: true,
        },
    ]
}

/// `s` as the pages' templates escape it.
fn esc(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
}

/// A Claude Code `PreToolUse` of `tool` with `input`, in the session `session`.
fn hook_input(cwd: &str, session: &str, tool: &str, input: &Value) -> String {
    json!({
        "session_id": session, "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        "tool_use_id": format!("toolu_{}", uuid::Uuid::new_v4().simple()),
    })
    .to_string()
}

/// The create request the hook makes for `tool` with `input`, for the Web Push rig.
fn approval_body(tool: &str, input: &Value) -> Value {
    json!({
        "question": format!("Claude Code wants to use {tool}"), "kind": "choose",
        "options": ["Allow", "Deny"], "allow_other": false,
        "approval": {"harness": "claude", "tool_name": tool, "tool_input": input}
    })
}

async fn get(srv: &TestServer, url: &str, cookie: Option<&str>) -> (StatusCode, String) {
    let mut req = srv.client.get(url);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// The ask ntfy was given for the decision `id` (waits up to 20 s).
async fn ntfy_ask(ntfy: &Receiver, id: &str) -> Value {
    let seq = id.replace('-', "");
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let found = ntfy
                .requests()
                .iter()
                .map(|r| r.json())
                .find(|m| m["sequence_id"] == seq.as_str() && m.get("actions").is_some());
            if let Some(m) = found {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        let got: Vec<String> = ntfy
            .requests()
            .iter()
            .map(|r| r.json())
            .map(|m| {
                format!(
                    "{} {} {}",
                    m["sequence_id"],
                    m["title"],
                    m.get("actions").is_some()
                )
            })
            .collect();
        panic!("ntfy was not told of {id}: {got:?}")
    })
}

/// A server that notifies ntfy (the receiver), and the device cookie of its person's feed.
async fn notifying() -> (TestServer, Receiver, String, impl Drop) {
    let db = fresh_sqlite_url();
    // Room for every ask of the test within the person's notification budget.
    let srv = TestServer::start_budgeted(&db.url, 100, Duration::from_secs(60)).await;
    let ntfy = srv.ntfy_phone().await;
    let feed = srv.feed_url().await;
    let (_, cookie) = open_feed(&feed).await;
    (srv, ntfy, cookie.expect("the feed binds the device"), db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_of_each_tool_input_is_on_every_screen() {
    let (srv, ntfy, cookie, _db) = notifying().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();
    for (i, case) in cases().into_iter().enumerate() {
        let session = format!("fields-{i}");
        let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
        let (child, started) =
            start(cmd, &hook_input(&cwd, &session, case.tool, &case.input)).await;
        let d = pending_decision(&srv).await;
        let web_url = d["web_url"].as_str().unwrap();
        let tool = case.tool;

        // The approval page: the tool named in the title and whole below it, every field.
        let (status, page) = get(&srv, &srv.person_url(web_url).await, None).await;
        assert_eq!(status, 200, "{tool}: {page}");
        assert!(
            page.contains(&format!("<h1 id=\"title\">{}</h1>", esc(case.title))),
            "{tool}: the title names the tool: {page}"
        );
        assert!(
            page.contains(&format!("<code dir=\"ltr\">{}</code>", esc(tool))),
            "{tool}"
        );
        // The session page of the same call.
        let (status, sess) = get(
            &srv,
            &srv.url(&format!("/inbox/session?harness=claude&session={session}")),
            Some(&cookie),
        )
        .await;
        assert_eq!(status, 200, "{tool}: {sess}");
        for (name, html) in [("approval page", &page), ("session page", &sess)] {
            for (path, value) in case.fields {
                let row = format!(
                    "<dt><code dir=\"ltr\">{}</code></dt>\n<dd><code dir=\"ltr\">{}</code></dd>",
                    esc(path),
                    esc(value)
                );
                assert!(html.contains(&row), "{tool}: {name} lacks {path}: {html}");
            }
            assert!(!html.contains("id=\"cut\""), "{tool}: {name} cut nothing");
        }

        // ntfy: every field on its line; one-tap Allow only where all of it is shown.
        let id = d["decision_id"].as_str().unwrap();
        let ask = ntfy_ask(&ntfy, id).await;
        let message = ask["message"].as_str().unwrap();
        assert!(message.starts_with(case.title), "{tool}: {message}");
        for (path, value) in case.fields {
            assert!(
                message.lines().any(|l| l == format!("{path}: {value}")),
                "{tool}: ntfy lacks {path}: {message}"
            );
        }
        let allow = ask["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["label"] == "Allow")
            .unwrap()
            .clone();
        let expected = if case.one_tap { "http" } else { "view" };
        assert_eq!(allow["action"], expected, "{tool}: {message}");

        // Web Push: the same lines and the same rule.
        let (notice, push_url) = push_notice_for(&srv, approval_body(tool, &case.input)).await;
        let body = notice.payload["body"].as_str().unwrap();
        for (path, value) in case.fields {
            assert!(
                body.lines().any(|l| l == format!("{path}: {value}")),
                "{tool}: push lacks {path}: {body}"
            );
        }
        if case.one_tap {
            assert_eq!(
                notice.payload["answers"],
                json!(["Allow", "Deny"]),
                "{tool}"
            );
        } else {
            assert_eq!(notice.payload["answers"], json!(["Deny"]), "{tool}");
            assert_eq!(notice.payload["opens"], json!(["Allow"]), "{tool}");
        }

        // Denied on the page; the hook hears it, and the next case starts from nothing.
        srv.answer_ok(web_url, json!({"value": "Deny"})).await;
        let resp = srv
            .client
            .post(&push_url)
            .json(&json!({"value": "Deny"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let out = finish(child, started).await;
        assert_eq!(
            out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
            "{tool}: {out:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_not_shown_takes_the_one_tap_allow_and_a_cut_one_every_quick_allow() {
    let (srv, ntfy, cookie, _db) = notifying().await;
    let dir = Dir::new();
    let cwd = dir.path().display().to_string();

    // A DELETE whose body spans lines: a notification shows it only as marked code points,
    // so Allow opens the page, which shows the body as the block it is.
    let http = json!({"url": "https://api.example.com/v1/users", "method": "DELETE",
                      "body": "{\n  \"all\": true\n}"});
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let (child, started) = start(
        cmd,
        &hook_input(&cwd, "s-body", "mcp__http__request", &http),
    )
    .await;
    let d = pending_decision(&srv).await;
    let web_url = d["web_url"].as_str().unwrap().to_string();
    let ask = ntfy_ask(&ntfy, d["decision_id"].as_str().unwrap()).await;
    let message = ask["message"].as_str().unwrap();
    assert!(
        message.contains("body: {⟨U+000A⟩  \"all\": true⟨U+000A⟩}"),
        "{message}"
    );
    let actions = ask["actions"].as_array().unwrap();
    let allow = actions.iter().find(|a| a["label"] == "Allow").unwrap();
    assert_eq!(allow["action"], "view", "Allow opens the page: {allow}");
    let (notice, push_url) =
        push_notice_for(&srv, approval_body("mcp__http__request", &http)).await;
    assert_eq!(notice.payload["answers"], json!(["Deny"]));
    assert_eq!(notice.payload["opens"], json!(["Allow"]));
    let (_, page) = get(&srv, &srv.person_url(&web_url).await, None).await;
    assert!(
        page.contains(&format!(
            "<dd><pre class=\"file\" dir=\"ltr\"><code>{}</code></pre></dd>",
            esc("{\n  \"all\": true\n}")
        )),
        "{page}"
    );
    assert!(
        page.contains("id=\"allow\""),
        "the page shows all of it: {page}"
    );
    srv.answer(&web_url, json!({"value": "Deny"})).await;
    srv.client
        .post(&push_url)
        .json(&json!({"value": "Deny"}))
        .send()
        .await
        .unwrap();
    finish(child, started).await;

    // A field past the page's cut: Allow only once all of it is open, from the form and
    // from JSON alike.
    let padded = json!({"command": "make deploy",
                        "env": {"PAYLOAD": "x".repeat(25_000), "TARGET": "prod"}});
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let (child, started) = start(cmd, &hook_input(&cwd, "s-cut", "Bash", &padded)).await;
    let d = pending_decision(&srv).await;
    let web_url = d["web_url"].as_str().unwrap().to_string();
    let person_url = srv.person_url(&web_url).await;
    let (_, page) = get(&srv, &person_url, None).await;
    assert!(
        page.contains("id=\"cut\"") && !page.contains("id=\"allow\""),
        "{page}"
    );
    assert!(
        !page.contains(">prod<"),
        "env.TARGET is past the cut: {page}"
    );
    let (_, whole) = get(&srv, &format!("{person_url}?whole=1"), None).await;
    assert!(
        whole.contains(
            "<dt><code dir=\"ltr\">env.TARGET</code></dt>\n<dd><code dir=\"ltr\">prod</code></dd>"
        ),
        "the whole page shows it"
    );
    let (status, body) = srv.answer(&web_url, json!({"value": "Allow"})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "whole", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("whole"),
        "{body}"
    );
    let (status, body) = srv
        .answer(&web_url, json!({"value": "Allow", "whole": "yes"}))
        .await;
    assert_eq!(status, 422, "{body}");
    let form = srv
        .client
        .post(&person_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-site", "same-origin")
        .body("value=Allow")
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 422);
    assert_eq!(
        srv.get(d["decision_id"].as_str().unwrap()).await["status"],
        "pending"
    );
    srv.answer_ok(&web_url, json!({"value": "Allow", "whole": true}))
        .await;
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );

    // On the session page, "Allow all" needs every call shown whole; Deny all still works.
    let make = |input: Value| {
        json!({"question": "Claude Code wants to run: make", "kind": "choose",
               "options": ["Allow", "Deny"], "allow_other": false,
               "approval": {"harness": "claude", "tool_name": "Bash", "tool_input": input,
                            "session_id": "s-all"}})
    };
    let one = srv.create(make(json!({"command": "make a"}))).await;
    let two = srv.create(make(padded.clone())).await;
    let (status, sess) = get(
        &srv,
        &srv.url("/inbox/session?harness=claude&session=s-all"),
        Some(&cookie),
    )
    .await;
    assert_eq!(status, 200, "{sess}");
    assert!(!sess.contains("id=\"allow-all\""), "{sess}");
    assert!(sess.contains("id=\"not-all\"") && sess.contains("id=\"open-2\""));
    assert!(sess.contains("id=\"allow-1\""), "{sess}");
    let tokens: Vec<&str> = sess
        .split("name=\"call\" value=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert_eq!(tokens.len(), 2);
    let form = |value: &str| {
        format!(
            "harness=claude&session=s-all&value={value}&call={}&call={}",
            tokens[0], tokens[1]
        )
    };
    let post = |body: String| {
        srv.client
            .post(srv.url("/inbox/session"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("sec-fetch-site", "same-origin")
            .header("cookie", &cookie)
            .body(body)
            .send()
    };
    assert_eq!(post(form("Allow")).await.unwrap().status(), 422);
    for h in [&one, &two] {
        assert_eq!(
            srv.get(h["decision_id"].as_str().unwrap()).await["status"],
            "pending"
        );
    }
    post(form("Deny")).await.unwrap();
    for h in [&one, &two] {
        assert_eq!(
            srv.get(h["decision_id"].as_str().unwrap()).await["outcome"],
            "Deny"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_puppeteer_approval_reads_well_on_a_phone() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let (_db, srv) = server().await;
    let dir = Dir::new();
    let case = cases().remove(0);
    let input = hook_input(
        &dir.path().display().to_string(),
        "s-phone",
        case.tool,
        &case.input,
    );
    let cmd = hook_command(dir.path(), &srv.base, Some(&srv.key), &["hook", "claude"]);
    let (child, started) = start(cmd, &input).await;
    let d = pending_decision(&srv).await;
    b.resize(390, 844).await;
    b.goto(&srv.person_url(d["web_url"].as_str().unwrap()).await)
        .await;
    b.screenshot("approval-puppeteer-390").await;
    assert_fit_for_a_phone(&b, "puppeteer approval").await;
    let fields = b.text_of("#fields").await;
    assert!(
        fields.contains("launchOptions.executablePath") && fields.contains("/bin/sh"),
        "{fields}"
    );
    let title = b.text_of("#title").await;
    assert!(
        title.contains("mcp__puppeteer__puppeteer_navigate"),
        "{title}"
    );
    b.click_and_wait("#deny").await;
    let out = finish(child, started).await;
    assert_eq!(
        out.stdout["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out:?}"
    );
    b.close().await;
}
