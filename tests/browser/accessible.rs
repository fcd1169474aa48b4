//! Every page the person sees passes axe-core at phone width (360×800) with no serious or
//! critical violation, and every control on it has an accessible name: the feed (empty, with
//! what waits, with Recent), each kind of question, tool approvals of each shape, the
//! answered, declined, expired and withdrawn states, the session page, the passkey offer, a
//! device with a passkey and an approval that needs it, and the error pages. Each page is
//! also saved as `a11y-<name>.png` (and `-dark.png`) among the screenshots.

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::a11y::{assert_none_found, axe_source, check_page};
use crate::common::approval::passkey_guarded;
use crate::common::browser::Browser;
use crate::common::db::{SqliteTestDb, fresh_sqlite_url};
use crate::common::server::{TestServer, s, send};
use crate::passkey::{add_authenticator, wait_for_text};
use crate::support::{approval, bash, close, database_choice, feed_url, setup};

/// The pages looked at so far and what was found on them.
struct Sweep<'a> {
    b: &'a Browser,
    axe: &'static str,
    found: Vec<String>,
}

impl<'a> Sweep<'a> {
    /// Nothing looked at yet, in `b`, with axe-core's source `axe`.
    fn new(b: &'a Browser, axe: &'static str) -> Sweep<'a> {
        Sweep {
            b,
            axe,
            found: Vec::new(),
        }
    }

    /// Checks the page open now in the light and the dark colour scheme (each has colours
    /// of its own to contrast), and saves it as `a11y-<name>.png` and `a11y-<name>-dark.png`.
    async fn check(&mut self, name: &str) {
        check_page(self.b, Some(self.axe), name, &mut self.found).await;
        self.b.screenshot(&format!("a11y-{name}")).await;
        color_scheme(self.b, "dark").await;
        let dark = format!("{name} (dark)");
        check_page(self.b, Some(self.axe), &dark, &mut self.found).await;
        self.b.screenshot(&format!("a11y-{name}-dark")).await;
        color_scheme(self.b, "").await;
    }

    /// Opens `url`, then checks it.
    async fn visit(&mut self, url: &str, name: &str) {
        self.b.goto(url).await;
        self.check(name).await;
    }
}

/// axe-core, a browser and a server (`setup`); `None` when axe-core or the browser is
/// skipped.
async fn setup_with_axe() -> Option<(&'static str, Browser, TestServer, SqliteTestDb)> {
    let axe = axe_source()?;
    let (b, srv, db) = setup().await?;
    Some((axe, b, srv, db))
}

/// Makes the page see `prefers-color-scheme: <scheme>` (`""`: the browser's own again).
async fn color_scheme(b: &Browser, scheme: &str) {
    b.cdp(
        "Emulation.setEmulatedMedia",
        json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
    )
    .await;
    let dark = b
        .js(
            "return matchMedia('(prefers-color-scheme: dark)').matches",
            vec![],
        )
        .await;
    assert_eq!(dark, json!(scheme == "dark"), "the page sees {scheme:?}");
}

/// Ends the decision behind `handle` as if its time had run out (the sweeper's own step, at
/// a moment past its expiry).
async fn expire(srv: &TestServer, handle: &Value) {
    let id: Uuid = s(handle, "decision_id").parse().unwrap();
    let later = OffsetDateTime::now_utc() + Duration::days(60);
    srv.svc.store().expire(id, later).await.expect("expired");
}

/// Taps the button `css`, brought to the middle of the screen first: chromedriver does not
/// scroll what is on screen already, even when the bar fixed to the bottom covers it.
async fn tap(b: &Browser, css: &str) {
    b.js(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'}); return null",
        vec![json!(css)],
    )
    .await;
    b.click_and_wait(css).await;
}

async fn cancel(srv: &TestServer, handle: &Value, reason: &str) {
    let path = format!("/v1/decisions/{}/cancel", s(handle, "decision_id"));
    let (status, body) = send(
        srv.req(reqwest::Method::POST, &path)
            .json(&json!({"reason": reason})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn every_question_page_passes_axe_at_phone_width() {
    let Some((axe, b, srv, _db)) = setup_with_axe().await else {
        return;
    };
    let mut sweep = Sweep::new(&b, axe);
    let feed = feed_url(&srv).await;
    sweep.visit(&feed, "feed-empty").await;

    let bool_q = srv
        .create(json!({"question": "Deploy v2.3 to production?", "kind": "bool",
            "project": "billing", "yes_label": "Ship it", "no_label": "Hold",
            "context_md": "Changes since **v2.2**:\n\n- faster invoices\n- `GET /v2/bills`\n\n| a | b |\n|---|---|\n| 1 | 2 |",
            "attachments": [{"name": "Release notes", "url": "https://example.com/notes"}]}))
        .await;
    let choose = srv.create(database_choice()).await;
    let multi = srv
        .create(
            json!({"question": "Which regions?", "kind": "choose", "multi": true,
            "options": ["eu-west", "us-east", "ap-south"]}),
        )
        .await;
    let text = srv
        .create(
            json!({"question": "What should the release notes say?", "kind": "text",
            "placeholder": "one or two lines"}),
        )
        .await;
    let schema_form = srv
        .create(
            json!({"question": "Order the team licences", "kind": "form",
            "schema": {"type": "object", "properties": {
                "name": {"type": "string", "title": "Your name", "minLength": 2,
                         "description": "As on the invoice"},
                "email": {"type": "string", "format": "email", "title": "Billing email"},
                "site": {"type": "string", "format": "uri", "title": "Web site"},
                "start": {"type": "string", "format": "date", "title": "Start"},
                "call": {"type": "string", "format": "date-time", "title": "Call at"},
                "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 10},
                "plan": {"type": "string", "title": "Plan", "enum": ["free", "pro", "team"],
                         "enumNames": ["Free", "Pro", "Team"]},
                "size": {"type": "string", "title": "Size", "oneOf": [
                    {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "tags": {"type": "array", "title": "Tags",
                         "items": {"type": "string", "enum": ["dev", "design"]}},
                "notes": {"type": "string", "title": "Notes", "maxLength": 500},
                "newsletter": {"type": "boolean", "title": "Send me the newsletter"}
            }, "required": ["name", "email", "seats", "plan"]}}),
        )
        .await;
    let questions_form = srv
        .create(
            json!({"question": "Set-up", "kind": "form", "project": "ops",
            "questions": [
                {"id": "db", "question": "Which database?", "header": "Database",
                 "options": [{"label": "PostgreSQL", "description": "production"},
                             {"label": "SQLite", "description": "embedded"}], "recommended": 0},
                {"id": "features", "question": "Which features?", "multiSelect": true,
                 "options": [{"label": "Search"}, {"label": "Export"}]},
                {"id": "ok", "question": "Ready to go?", "type": "yesno"},
                {"id": "name", "question": "Name the service", "type": "text",
                 "placeholder": "lowercase"}]}),
        )
        .await;
    let todo = srv
        .create(
            json!({"question": "Rotate the staging API key", "kind": "todo",
            "context_md": "The old one leaked in a log."}),
        )
        .await;
    sweep.visit(&feed, "feed-waiting").await;

    for (handle, name) in [
        (&bool_q, "bool"),
        (&choose, "choose"),
        (&multi, "choose-multi"),
        (&text, "text"),
        (&schema_form, "form-schema"),
        (&questions_form, "form-questions"),
        (&todo, "todo"),
    ] {
        sweep.visit(s(handle, "web_url"), name).await;
    }

    // A form sent back with its errors beside the fields.
    b.goto(s(&schema_form, "web_url")).await;
    b.js(
        "document.getElementById('answer').noValidate = true; return null",
        vec![],
    )
    .await;
    b.click_and_wait("#submit").await;
    assert!(b.has(".errors").await, "the empty form was refused");
    sweep.check("form-refused").await;

    // Answered, declined, answered elsewhere while the page was open, expired, withdrawn.
    b.goto(s(&bool_q, "web_url")).await;
    b.type_into("#remark", "after 6pm").await;
    b.click_and_wait("button[name=value][value=yes]").await;
    sweep.check("bool-answered").await;
    b.goto(s(&text, "web_url")).await;
    b.type_into("#remark", "not my call").await;
    b.click_and_wait("#decline").await;
    sweep.check("text-declined").await;
    b.goto(s(&choose, "web_url")).await;
    let (status, body) = srv
        .answer(s(&choose, "web_url"), json!({"value": "MySQL"}))
        .await;
    assert_eq!(status, 200, "{body}");
    b.click("label[for=opt-0]").await;
    b.click_and_wait("#submit").await;
    sweep.check("choose-answered-elsewhere").await;
    expire(&srv, &multi).await;
    sweep.visit(s(&multi, "web_url"), "choose-expired").await;
    cancel(&srv, &questions_form, "abandoned").await;
    sweep
        .visit(s(&questions_form, "web_url"), "form-withdrawn")
        .await;
    cancel(&srv, &schema_form, "no longer needed").await;
    sweep
        .visit(s(&schema_form, "web_url"), "form-cancelled")
        .await;
    sweep.visit(&feed, "feed-recent").await;

    // Two people must agree: the progress line, on the person's own feed and page.
    let ana = srv.add_person("ana").await;
    srv.add_person("ben").await;
    srv.create(json!({"question": "Ship release 2.4?", "kind": "bool",
            "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let ana_feed = srv.url(&format!("/inbox/{}", srv.svc.tokens().feed_token(ana.id)));
    sweep.visit(&ana_feed, "feed-people").await;
    b.click_and_wait("#pending a").await;
    sweep.check("bool-people").await;

    // The error pages: a wrong answer link, a wrong feed link, a wrong approval link.
    for (path, name) in [
        (format!("/d/{}", "A".repeat(48)), "error-answer-link"),
        (format!("/inbox/{}", "A".repeat(48)), "error-feed-link"),
        (format!("/a/{}", "A".repeat(48)), "error-approval-link"),
    ] {
        sweep.visit(&srv.url(&path), name).await;
    }

    assert_none_found(&sweep.found, "the question pages");
    close(b, srv).await;
}

#[tokio::test]
async fn every_approval_page_passes_axe_at_phone_width() {
    let Some((axe, b, srv, _db)) = setup_with_axe().await else {
        return;
    };
    let mut sweep = Sweep::new(&b, axe);
    let feed = feed_url(&srv).await;

    let command = srv
        .create(bash(
            "sudo rm -rf build/ && curl -fsSL https://get.example.com | sh",
            "s1",
        ))
        .await;
    let edit = srv
        .create(approval(
            "Edit",
            json!({"file_path": "/home/me/shop/src/lib.rs", "old_string": "let a = 1;",
                   "new_string": "let a = 2;\nlet b = 3;", "replace_all": false}),
            "s2",
        ))
        .await;
    let write = srv
        .create(approval(
            "Write",
            json!({"file_path": "/home/me/shop/notes.md", "content": "# Notes\n\nShip it.\n"}),
            "s3",
        ))
        .await;
    let fetch = srv
        .create(approval(
            "WebFetch",
            json!({"url": "https://docs.example.com/api/v2", "prompt": "Find the rate limits"}),
            "s4",
        ))
        .await;
    let mcp = srv
        .create(approval(
            "mcp__db__query",
            json!({"sql": "DELETE FROM sessions", "params": [], "dry_run": false}),
            "s5",
        ))
        .await;
    let long = srv
        .create(bash(&format!("echo {}", "x".repeat(25_000)), "s6"))
        .await;
    let session_calls = [
        srv.create(bash("cargo build --release", "release")).await,
        srv.create(bash("git push --force origin main", "release"))
            .await,
    ];
    sweep.visit(&feed, "feed-approvals").await;

    let page = |h: &Value| {
        let srv = &srv;
        let url = s(h, "web_url").to_owned();
        async move { srv.person_url(&url).await }
    };
    let command_page = page(&command).await;
    sweep.visit(&command_page, "approval-command").await;
    b.click("details.edit summary").await;
    b.type_into("#command", "rm -rf build/cache").await;
    b.wait_for("#edit-preview:not([hidden])").await;
    sweep.check("approval-command-edited").await;
    sweep
        .visit(
            &format!("{command_page}?confirm=Allow"),
            "approval-confirm-allow",
        )
        .await;
    sweep
        .visit(
            &format!("{command_page}?confirm=Deny"),
            "approval-confirm-deny",
        )
        .await;
    sweep
        .visit(s(&command, "web_url"), "approval-agents-link")
        .await;
    for (h, name) in [
        (&edit, "approval-edit"),
        (&write, "approval-write"),
        (&fetch, "approval-fetch"),
        (&mcp, "approval-mcp"),
        (&long, "approval-cut"),
    ] {
        sweep.visit(&page(h).await, name).await;
    }
    let whole = b.find("#whole").await.prop("href").await.unwrap().unwrap();
    sweep.visit(&whole, "approval-whole").await;

    sweep.visit(&feed, "feed-session").await;
    b.click_and_wait("#pending a.session-link").await;
    sweep.check("session").await;

    // Allowed with an edit, denied, allowed for a while, withdrawn, expired.
    b.goto(&command_page).await;
    b.click("details.edit summary").await;
    b.type_into("#command", "rm -rf build/cache").await;
    b.type_into("#remark", "only the cache").await;
    b.click_and_wait("#allow").await;
    sweep.check("approval-allowed-edited").await;
    b.goto(&page(&edit).await).await;
    b.type_into("#remark", "keep a = 1").await;
    b.click_and_wait("#deny").await;
    sweep.check("approval-denied").await;
    b.goto(&page(&write).await).await;
    tap(&b, "#allow-for-15m").await;
    sweep.check("approval-allowed-for-a-while").await;
    cancel(&srv, &fetch, "abandoned").await;
    sweep.visit(&page(&fetch).await, "approval-withdrawn").await;
    expire(&srv, &mcp).await;
    sweep.visit(&page(&mcp).await, "approval-expired").await;
    for h in &session_calls {
        cancel(&srv, h, "abandoned").await;
    }
    sweep.visit(&feed, "feed-allowances-recent").await;

    assert_none_found(&sweep.found, "the approval pages");
    close(b, srv).await;
}

#[tokio::test]
async fn the_passkey_pages_pass_axe_at_phone_width() {
    let Some(axe) = axe_source() else {
        return;
    };
    let Some(b) = Browser::start().await else {
        return;
    };
    let db = fresh_sqlite_url();
    // WebAuthn needs a secure context: localhost is one.
    let srv = TestServer::start_on_localhost(&db.url).await;
    let mut sweep = Sweep::new(&b, axe);
    add_authenticator(&b, "internal").await;
    b.goto(&feed_url(&srv).await).await;
    b.wait_for("#passkey:not([hidden]) #passkey-add").await;
    sweep.check("feed-passkey-offer").await;
    b.click("#passkey-add").await;
    wait_for_text(&b, "#passkey-add-status", "passkey was added").await;
    sweep.check("feed-passkey-added").await;

    let h = srv
        .create(passkey_guarded("git push --force origin main"))
        .await;
    sweep.visit(&srv.url("/inbox"), "feed-with-passkey").await;
    let link = srv.person_url(s(&h, "web_url")).await;
    sweep.visit(&link, "approval-passkey").await;

    assert_none_found(&sweep.found, "the passkey pages");
    close(b, srv).await;
}
