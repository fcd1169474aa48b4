//! The pages as a newcomer reads them, over plain HTTP: a way back to the feed from every
//! page a bound browser opens (and none invented for a bare link), times in the person's own
//! zone, the remark box above the buttons it goes with, the feed's kinds in words, a to-do's
//! context, the device offers folded once used, and an agent's wait told as one under way.
//! (tests/browser/reader.rs looks at the same pages in Chromium.)

mod common;

use common::forms::{no_redirects, page_form};
use common::passkey::give_passkey;
use common::people::own_feed_link;
use common::server::{TestServer, fresh_server, open_feed, s};
use reqwest::StatusCode;
use sayso::service::PersonSettings;
use serde_json::{Value, json};
use time::OffsetDateTime;

const TO_FEED: &str = r#"<a href="/inbox" id="to-feed">"#;

/// The page at `url`, with the device `cookie` if given.
async fn page(url: &str, cookie: Option<&str>) -> (StatusCode, String) {
    let mut req = no_redirects().get(url);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

async fn form_post(url: &str, body: &str, cookie: Option<&str>) -> (StatusCode, String) {
    let mut req = page_form(url, body.to_string());
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// The feed link of the default inbox, and the cookie of a browser that opened it.
async fn bound(srv: &TestServer) -> (String, String) {
    let feed = srv.feed_url().await;
    let (resp, cookie) = open_feed(&feed).await;
    assert_eq!(resp.status(), StatusCode::OK);
    (feed, cookie.expect("the feed link binds the browser"))
}

/// The feed approval link of the decision of `handle` for the inbox's own person.
async fn approval_link(srv: &TestServer, handle: &Value) -> String {
    own_feed_link(srv, s(handle, "decision_id")).await
}

fn approval(answer_by: Option<OffsetDateTime>) -> Value {
    let mut a = json!({"harness": "claude", "tool_name": "Bash",
                       "tool_input": {"command": "cargo test"}});
    if let Some(by) = answer_by {
        a["answer_by"] = json!(
            by.format(&time::format_description::well_known::Rfc3339)
                .unwrap()
        );
    }
    json!({"question": "Run a command?", "kind": "choose", "options": ["Allow", "Deny"],
           "approval": a})
}

/// Sets the zone of the inbox's own person (without quiet hours).
async fn set_own_zone(srv: &TestServer, tz: &str) {
    let own = srv.svc.list_people("default").await.unwrap()[0].clone();
    let settings = PersonSettings {
        tz: Some(tz.into()),
        ..PersonSettings::default()
    };
    srv.svc
        .set_person("default", &own.name, &settings)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_a_bound_browser_opens_leads_back_to_the_feed_and_a_bare_link_invents_none() {
    let (_db, srv) = fresh_server().await;
    let (feed, cookie) = bound(&srv).await;
    let feed_token = feed.rsplit('/').next().unwrap().to_string();
    let cookie = Some(cookie.as_str());
    let kinds = [
        json!({"question": "Deploy?", "kind": "bool"}),
        json!({"question": "Which?", "kind": "choose", "options": ["a", "b"]}),
        json!({"question": "Name it", "kind": "text"}),
        json!({"question": "Release", "kind": "form",
               "schema": {"properties": {"v": {"type": "string"}}}}),
        json!({"question": "Water the plants", "kind": "todo"}),
    ];
    for body in kinds {
        let h = srv.create(body.clone()).await;
        let (status, html) = page(s(&h, "web_url"), cookie).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains(TO_FEED), "{body}: {html}");
        assert!(
            !html.contains(&feed_token),
            "the feed link never goes into a page"
        );
        let (_, html) = page(s(&h, "web_url"), None).await;
        assert!(!html.contains("to-feed"), "a bare link has no feed: {html}");
    }

    // Answered (after the 303), then answered again (409).
    let h = srv
        .create(json!({"question": "Ship?", "kind": "bool"}))
        .await;
    let (status, _) = form_post(s(&h, "web_url"), "value=yes", cookie).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(s(&h, "web_url"), cookie).await;
    assert!(html.contains(r#"data-status="answered""#) && html.contains(TO_FEED));
    let (status, html) = form_post(s(&h, "web_url"), "value=no", cookie).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(html.contains(TO_FEED), "{html}");

    // The approval page through the feed's link, and through the agent's link, whose post
    // is refused on a page that still leads back.
    let h = srv.create(approval(None)).await;
    let (status, html) = page(&approval_link(&srv, &h).await, cookie).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"id="actionbar""#) && html.contains(TO_FEED));
    let (_, html) = page(s(&h, "web_url"), cookie).await;
    assert!(html.contains(TO_FEED));
    let (status, html) = form_post(s(&h, "web_url"), "value=Allow", cookie).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(html.contains(TO_FEED), "{html}");

    // A wrong link, from a bound browser and from a bare one.
    let wrong = format!("{}/d/{}", srv.base, "A".repeat(48));
    let (status, html) = page(&wrong, cookie).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(html.contains(TO_FEED));
    let (_, html) = page(&wrong, None).await;
    assert!(!html.contains("to-feed"));
    // A cookie that names no device is no way back either.
    let (_, html) = page(&wrong, Some("sayso_device=forged")).await;
    assert!(!html.contains("to-feed"));

    // Expired: the 410 page of a late answer leads back too.
    let h = srv
        .create(json!({"question": "Soon", "kind": "bool", "ttl_seconds": 10}))
        .await;
    srv.await_decision(s(&h, "decision_id"), 30).await;
    let (status, html) = form_post(s(&h, "web_url"), "value=yes", cookie).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(html.contains(r#"data-status="expired""#) && html.contains(TO_FEED));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn times_are_shown_in_the_readers_own_zone_and_say_which() {
    let (_db, srv) = fresh_server().await;
    let h = srv
        .create(json!({"question": "Ship?", "kind": "bool"}))
        .await;
    let (status, _) = form_post(s(&h, "web_url"), "value=yes", None).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    // Nobody has a zone: UTC, said as UTC.
    let (_, html) = page(s(&h, "web_url"), None).await;
    assert!(html.contains(" UTC</time>"), "{html}");

    // The inbox's own person keeps Asia/Kolkata: a bare link falls back to it.
    set_own_zone(&srv, "Asia/Kolkata").await;
    let (_, html) = page(s(&h, "web_url"), None).await;
    assert!(
        html.contains(" IST</time>") && !html.contains(" UTC</time>"),
        "{html}"
    );
    let (_, cookie) = bound(&srv).await;
    let (_, html) = page(s(&h, "web_url"), Some(&cookie)).await;
    assert!(html.contains(" IST</time>"), "{html}");
    // The feed's history, too.
    let (_, html) = page(&format!("{}/inbox", srv.base), Some(&cookie)).await;
    let history = &html[html.find(r#"id="history""#).unwrap()..];
    assert!(history.contains(" IST</span>"), "{history}");

    // A browser bound to ben, who lives in São Paulo, reads the same page in his zone.
    let settings = PersonSettings {
        quiet: Some("23:00-06:00".into()),
        tz: Some("America/Sao_Paulo".into()),
        ..PersonSettings::default()
    };
    let (_, ben_feed) = srv
        .svc
        .add_person("default", "ben", &settings)
        .await
        .unwrap();
    let (_, ben) = open_feed(&ben_feed).await;
    let (_, html) = page(s(&h, "web_url"), ben.as_deref()).await;
    assert!(html.contains(" UTC-3</time>"), "{html}");

    // A pending question says when it expires, on the clock of the zone.
    let open = srv
        .create(json!({"question": "Later?", "kind": "bool", "ttl_minutes": 30}))
        .await;
    let (_, html) = page(s(&open, "web_url"), None).await;
    assert!(html.contains("Expires in 29 min, at <time"), "{html}");
    assert!(html.contains(" IST</time>"), "{html}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_wait_is_told_as_one_under_way_with_its_end_on_the_clock() {
    let (_db, srv) = fresh_server().await;
    set_own_zone(&srv, "Asia/Kolkata").await;
    let by = OffsetDateTime::now_utc() + time::Duration::seconds(9 * 60 + 40);
    let h = srv.create(approval(Some(by))).await;
    let (_, html) = page(&approval_link(&srv, &h).await, None).await;
    let local = by.to_offset(time::macros::offset!(+5:30));
    let clock = format!("{:02}:{:02}", local.hour(), local.minute());
    assert!(
        html.contains("The agent waits for your answer for 9 more minutes, until "),
        "{html}"
    );
    assert!(html.contains(&format!("{clock} IST")), "{clock}: {html}");
    assert!(!html.contains("answer in "), "{html}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remark_box_comes_before_the_buttons_it_goes_with() {
    let (_db, srv) = fresh_server().await;
    for (body, button) in [
        (
            json!({"question": "Ship?", "kind": "bool"}),
            r#"value="yes""#,
        ),
        (
            json!({"question": "Water the plants", "kind": "todo"}),
            r#"value="done""#,
        ),
        (
            json!({"question": "Which?", "kind": "choose", "options": ["a", "b"]}),
            r#"id="submit""#,
        ),
    ] {
        let h = srv.create(body.clone()).await;
        let (_, html) = page(s(&h, "web_url"), None).await;
        let remark = html.find(r#"id="remark""#).expect("a remark box");
        let button = html.find(button).expect("the answer button");
        assert!(
            remark < button,
            "{body}: the remark box is above the buttons"
        );
    }
    let h = srv.create(approval(None)).await;
    let (_, html) = page(&approval_link(&srv, &h).await, None).await;
    assert!(html.find(r#"id="remark""#).unwrap() < html.find(r#"id="actionbar""#).unwrap());
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_names_kinds_in_words_and_shows_a_todos_context_safely() {
    let (_db, srv) = fresh_server().await;
    for body in [
        approval(None),
        json!({"question": "Deploy?", "kind": "bool"}),
        json!({"question": "Which?", "kind": "choose", "options": ["a", "b"]}),
        json!({"question": "Name it", "kind": "text"}),
        json!({"question": "Release", "kind": "form",
               "schema": {"properties": {"v": {"type": "string"}}}}),
        json!({"question": "Rotate the key", "kind": "todo",
               "context_md": "In **vault**, then tell\u{202E}ops <script>alert(1)</script>"}),
    ] {
        srv.create(body).await;
    }
    let (_, cookie) = bound(&srv).await;
    let (_, html) = page(&format!("{}/inbox", srv.base), Some(&cookie)).await;
    let pending = &html[html.find(r#"id="pending""#).unwrap()..html.find(r#"id="todos""#).unwrap()];
    for words in ["Approval", "Yes or no", "Choice", "Text", "Form"] {
        assert!(
            pending.contains(&format!(">{words} · expires in")),
            "{words}: {pending}"
        );
    }
    for code in ["bool ·", "choose ·", "text ·", "form ·"] {
        assert!(!pending.contains(code), "{code}: {pending}");
    }
    let todos = &html[html.find(r#"id="todos""#).unwrap()..html.find(r#"id="history""#).unwrap()];
    assert!(
        todos.contains(r#"<div class="context todo-context">"#),
        "{todos}"
    );
    assert!(todos.contains("<strong>vault</strong>"), "{todos}");
    assert!(
        todos.contains("tell⟨U+202E⟩ops"),
        "hidden characters shown: {todos}"
    );
    assert!(
        !todos.contains("<script>") && todos.contains("&lt;script&gt;"),
        "{todos}"
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_offers_fold_away_only_for_a_person_with_a_passkey() {
    let (_db, srv) = fresh_server().await;
    let (_, cookie) = bound(&srv).await;
    let inbox = format!("{}/inbox", srv.base);
    let (_, html) = page(&inbox, Some(&cookie)).await;
    assert!(
        html.contains(r#"<div id="device-offers">"#),
        "shown plainly: {html}"
    );
    assert!(!html.contains(r#"id="this-device""#));
    let own = srv.svc.list_people("default").await.unwrap()[0].clone();
    give_passkey(&srv, &own).await;
    let (_, html) = page(&inbox, Some(&cookie)).await;
    // Hidden until feed.js knows whether this device has push on (it then folds them into
    // "This device", or shows them under the header).
    assert!(
        html.contains(r#"<div id="device-offers" hidden>"#),
        "{html}"
    );
    assert!(html.contains(r#"<details id="this-device" class="this-device" hidden>"#));
    assert!(html.find(r#"id="history""#).unwrap() < html.find(r#"id="this-device""#).unwrap());
    srv.stop().await;
}
