//! The person's pages over plain HTTP: statuses, redirects, headers, the feed, the image.
//! (tests/browser/ drives the same pages in Chromium.)

mod common;

use base64::Engine;
use common::forms::{form, form_post, page_form};
use common::server::{TestServer, fresh_server, s};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_answer_redirects_to_the_page_showing_the_result() {
    let (_db, srv) = fresh_server().await;
    let h = srv
        .create(json!({"question": "Deploy?", "kind": "bool", "yes_label": "Ship it"}))
        .await;
    let link = s(&h, "web_url");
    let resp = form_post(link, "value=yes&remark=after+lunch").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let location = resp.headers()["location"].to_str().unwrap().to_string();
    assert!(link.ends_with(&location), "{location}");
    let page = get(&srv, link).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"data-status="answered""#), "{html}");
    assert!(html.contains("Ship it") && html.contains("after lunch"));
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(d["outcome"], true);
    assert_eq!(d["remark"], "after lunch");

    // Again: 409, and the page says how it was resolved.
    let resp = form_post(link, "value=no").await;
    assert_eq!(resp.status(), StatusCode::CONFLICT);
    let html = resp.text().await.unwrap();
    assert!(html.contains(r#"data-status="answered""#));
    assert_eq!(srv.get(s(&h, "decision_id")).await["outcome"], true);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_form_answer_shows_the_error_beside_the_field_and_keeps_the_input() {
    let (_db, srv) = fresh_server().await;
    let h = srv
        .create(json!({"question": "Release", "kind": "form", "schema": {"properties": {
            "version": {"type": "string", "title": "Version"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 9}}, "required": ["version", "replicas"]}}))
        .await;
    let resp = form_post(s(&h, "web_url"), "version=1.4.2&replicas=12&remark=hm").await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.unwrap();
    assert!(html.contains(r#"class="errors" role="alert""#));
    assert!(html.contains(r#"class="field-error""#));
    assert!(
        html.contains(r#"value="1.4.2""#) && html.contains(r#"value="12""#),
        "input kept"
    );
    assert!(html.contains(">hm</textarea>"), "remark kept");
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "pending");
    let resp = form_post(s(&h, "web_url"), "version=1.4.2&replicas=3").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        srv.get(s(&h, "decision_id")).await["outcome"],
        json!({"version": "1.4.2", "replicas": 3})
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_expired_and_cross_site_each_get_their_page() {
    let (_db, srv) = fresh_server().await;
    let unknown = format!("{}/d/{}", srv.base, "A".repeat(48));
    let resp = get(&srv, &unknown).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(resp.text().await.unwrap().contains("Link not found"));

    let h = srv.create(json!({"question": "Q", "kind": "text"})).await;
    let resp = form(s(&h, "web_url"), "value=hijacked")
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = form(s(&h, "web_url"), "value=hijacked")
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "pending");

    let expiring = srv
        .create(json!({"question": "Soon", "kind": "bool", "ttl_seconds": 10, "default_outcome": false}))
        .await;
    srv.await_decision(s(&expiring, "decision_id"), 30).await;
    let resp = form_post(s(&expiring, "web_url"), "value=yes").await;
    assert_eq!(resp.status(), StatusCode::GONE);
    let html = resp.text().await.unwrap();
    assert!(html.contains(r#"data-status="expired""#));
    assert!(html.contains("not a person"), "{html}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_carries_the_security_headers() {
    let (_db, srv) = fresh_server().await;
    let feed = srv.feed_url().await;
    let h = srv.create(json!({"question": "Q", "kind": "bool"})).await;
    for url in [
        s(&h, "web_url").to_string(),
        feed,
        format!("{}/d/{}", srv.base, "B".repeat(48)),
        format!("{}/inbox/nope", srv.base),
    ] {
        let resp = get(&srv, &url).await;
        let hd = resp.headers();
        let csp = hd["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'"),
            "{url}"
        );
        assert!(!csp.contains("unsafe-inline"));
        assert_eq!(hd["referrer-policy"], "no-referrer", "{url}");
        assert_eq!(hd["x-content-type-options"], "nosniff", "{url}");
    }
    let css = get(&srv, srv.url("/static/sayso.css")).await;
    assert_eq!(css.status(), StatusCode::OK);
    assert!(
        css.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/css")
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_is_served_with_its_sniffed_type() {
    let (_db, srv) = fresh_server().await;
    // A 1×1 PNG.
    let png = base64::engine::general_purpose::STANDARD.decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    ).unwrap();
    let h = srv
        .create(json!({"question": "Look", "kind": "bool",
            "context_image_b64": base64::engine::general_purpose::STANDARD.encode(&png)}))
        .await;
    let page = srv.page_text(s(&h, "web_url")).await;
    assert!(page.contains("/image\""), "{page}");
    let resp = get(&srv, format!("{}/image", s(&h, "web_url"))).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert_eq!(resp.bytes().await.unwrap().as_ref(), png.as_slice());
    let plain = srv
        .create(json!({"question": "No image", "kind": "bool"}))
        .await;
    let resp = get(&srv, format!("{}/image", s(&plain, "web_url"))).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_lists_open_work_and_a_todo_is_done_in_one_tap() {
    let (_db, srv) = fresh_server().await;
    let inbox = srv.default_inbox().await;
    let feed = srv.svc.feed_url(&inbox);
    let later = srv
        .create(
            json!({"question": "Later one", "kind": "bool", "ttl_minutes": 120, "project": "ops"}),
        )
        .await;
    let sooner = srv
        .create(json!({"question": "Sooner one", "kind": "text", "ttl_minutes": 10}))
        .await;
    let todo = srv
        .create(json!({"question": "Water the plants", "kind": "todo", "project": "home"}))
        .await;
    let (_, html) = common::server::feed_page(&feed).await;
    assert!(html.contains("<title>(3) sayso"), "counts in the title");
    let (a, b) = (
        html.find("Sooner one").unwrap(),
        html.find("Later one").unwrap(),
    );
    assert!(a < b, "soonest expiry first");
    assert!(html.contains("Water the plants"));

    // The link's filter goes along to /inbox.
    let (_, filtered) = common::server::feed_page(&format!("{feed}?project=ops")).await;
    assert!(
        filtered.contains("Later one")
            && !filtered.contains("Sooner one")
            && !filtered.contains("Water")
    );

    // Done from the feed: back to the feed, and the to-do has moved to history.
    let resp = form_post(s(&todo, "web_url"), "return=feed&action=done").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    // Back to the feed's own address (a bound device's), never to the feed link: the
    // to-do's link may be an agent's.
    let location = resp.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(location, "/inbox");
    assert_eq!(srv.get(s(&todo, "decision_id")).await["outcome"], "done");
    let (_, html) = common::server::feed_page(&feed).await;
    assert!(html.contains("<title>(2) sayso"));
    let history = &html[html.find(r#"id="history""#).unwrap()..];
    assert!(history.contains("Water the plants"));
    let _ = (later, sooner);

    let resp = get(&srv, format!("{}/inbox/{}", srv.base, "C".repeat(48))).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetching_a_page_many_times_changes_nothing() {
    let (_db, srv) = fresh_server().await;
    let h = srv.create(json!({"question": "Q", "kind": "todo"})).await;
    for _ in 0..25 {
        let resp = get(&srv, s(&h, "web_url")).await;
        assert_eq!(resp.status(), StatusCode::OK);
        let resp = srv.client.head(s(&h, "web_url")).send().await.unwrap();
        assert!(resp.status().is_success() || resp.status() == StatusCode::METHOD_NOT_ALLOWED);
    }
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(d["status"], "pending");
    assert!(d["outcome"].is_null());
    srv.stop().await;
}

/// `GET url` with the server's client.
async fn get(srv: &TestServer, url: impl reqwest::IntoUrl) -> reqwest::Response {
    srv.client.get(url).send().await.unwrap()
}

/// An approval of the Claude Code session `session`, as `sayso hook claude` puts it.
fn session_call(session: &str, command: &str, step_up: bool) -> serde_json::Value {
    let mut body = json!({
        "question": format!("Claude Code wants to run: {command}"), "kind": "choose",
        "options": ["Allow", "Deny"], "allow_other": false,
        "approval": {"harness": "claude", "tool_name": "Bash",
            "tool_input": {"command": command}, "session_id": session, "editable": true}
    });
    if step_up {
        body["approval"]["step_up"] = json!("passkey");
    }
    body
}

/// The feed approval token of the inbox's own person for the decision of `h`.
async fn approval_token(srv: &TestServer, h: &serde_json::Value) -> String {
    let inbox = srv.default_inbox().await;
    let person = srv.svc.store().person(inbox.id).await.unwrap().unwrap();
    let id = s(h, "decision_id").parse().unwrap();
    srv.svc
        .tokens()
        .approve_token(id, sayso::domain::PersonChannel::Feed, person.id)
}

async fn status_of(srv: &TestServer, h: &serde_json::Value) -> String {
    srv.get(s(h, "decision_id")).await["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `POST /inbox/session` from the session page on the bound device `cookie`.
async fn answer_all(srv: &TestServer, cookie: &str, body: &str) -> reqwest::Response {
    page_form(srv.url("/inbox/session"), body.to_string())
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_calls_are_answered_on_one_screen_and_all_at_once_only_where_each_may_be() {
    let (_db, srv) = fresh_server().await;
    let feed = srv.feed_url().await;
    let one = srv.create(session_call("s1", "cargo build", false)).await;
    let two = srv.create(session_call("s1", "cargo test", false)).await;
    let elsewhere = srv.create(session_call("s9", "ls", false)).await;
    let (_, cookie) = common::server::open_feed(&feed).await;
    let cookie = cookie.expect("the feed link binds the device");
    let page = |query: &'static str, cookie: Option<String>| {
        let mut req = srv.client.get(srv.url(&format!("/inbox/session{query}")));
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        async move {
            let resp = req.send().await.unwrap();
            (resp.status(), resp.text().await.unwrap())
        }
    };

    // The feed gathers the session's calls under the link to their screen.
    let (_, html) = common::server::feed_page(&feed).await;
    assert!(
        html.contains(
            "<a href=\"/inbox/session?harness=claude&#38;session=s1\" class=\"session-link\">"
        ),
        "{html}"
    );
    let (status, html) = page("?harness=claude&session=s1", Some(cookie.clone())).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("<span class=\"w\">build</span>")
            && html.contains("<span class=\"w\">test</span>")
            && !html.contains(">ls<"),
        "{html}"
    );
    assert!(html.contains("id=\"allow-all\"") && html.contains("id=\"deny-all\""));
    let (t1, t2) = (
        approval_token(&srv, &one).await,
        approval_token(&srv, &two).await,
    );
    assert!(
        html.contains(&format!("name=\"call\" value=\"{t1}\"")),
        "{html}"
    );
    // Only a bound device sees it, and only with the session named.
    let (status, _) = page("?harness=claude&session=s1", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = page("?harness=claude", Some(cookie.clone())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // One call through its own link comes back to the session's screen.
    let three = srv.create(session_call("s1", "cargo doc", false)).await;
    let resp = form_post(
        &srv.url(&format!("/a/{}", approval_token(&srv, &three).await)),
        "return=session&value=Deny",
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        resp.headers()["location"],
        "/inbox/session?harness=claude&session=s1"
    );
    assert_eq!(srv.get(s(&three, "decision_id")).await["outcome"], "Deny");

    // A call that arrives after the page was drawn is not answered by its "Allow all".
    let late = srv.create(session_call("s1", "cargo publish", false)).await;
    let resp = answer_all(
        &srv,
        &cookie,
        &format!("harness=claude&session=s1&value=Allow&call={t1}&call={t2}"),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/inbox");
    for h in [&one, &two] {
        let d = srv.get(s(h, "decision_id")).await;
        assert_eq!(
            (d["outcome"].as_str(), d["answered_by"]["channel"].as_str()),
            (Some("Allow"), Some("feed")),
            "{d}"
        );
    }
    assert_eq!(status_of(&srv, &late).await, "pending");

    // "Allow all" past a call that needs the passkey answers nothing, and says why.
    let guarded = srv.create(session_call("s1", "git push", true)).await;
    let (_, html) = page("?harness=claude&session=s1", Some(cookie.clone())).await;
    assert!(
        !html.contains("id=\"allow-all\"") && html.contains("id=\"not-all\""),
        "{html}"
    );
    let (tl, tg) = (
        approval_token(&srv, &late).await,
        approval_token(&srv, &guarded).await,
    );
    let resp = answer_all(
        &srv,
        &cookie,
        &format!("harness=claude&session=s1&value=Allow&call={tl}&call={tg}"),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = resp.text().await.unwrap();
    assert!(
        text.contains("Nothing was answered") && text.contains("where a call needs your passkey"),
        "{text}"
    );
    assert_eq!(status_of(&srv, &late).await, "pending");
    // Nor does a call of another session, or an answer that is not Allow or Deny.
    let te = approval_token(&srv, &elsewhere).await;
    let resp = answer_all(
        &srv,
        &cookie,
        &format!("harness=claude&session=s1&value=Deny&call={tl}&call={te}"),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(status_of(&srv, &late).await, "pending");
    assert_eq!(status_of(&srv, &elsewhere).await, "pending");
    let resp = answer_all(
        &srv,
        &cookie,
        &format!("harness=claude&session=s1&value=Maybe&call={tl}"),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    // Without the bound device, nothing.
    let resp = form(
        srv.url("/inbox/session"),
        format!("harness=claude&session=s1&value=Deny&call={tl}"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(status_of(&srv, &late).await, "pending");

    // "Deny all" is always there, and denies each.
    let resp = answer_all(
        &srv,
        &cookie,
        &format!("harness=claude&session=s1&value=Deny&call={tl}&call={tg}"),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(srv.get(s(&late, "decision_id")).await["outcome"], "Deny");
    assert_eq!(srv.get(s(&guarded, "decision_id")).await["outcome"], "Deny");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_sent_back_with_an_error_is_shown_against_the_agents_command() {
    let (_db, srv) = fresh_server().await;
    let h = srv.create(session_call("s1", "rm -rf build/", false)).await;
    let link = srv.url(&format!("/a/{}", approval_token(&srv, &h).await));
    let (_, html) = {
        let resp = get(&srv, &link).await;
        (resp.status(), resp.text().await.unwrap())
    };
    assert!(
        html.contains("data-asked=\"rm -rf build/\"")
            && html.contains("id=\"edit-preview\" aria-live=\"polite\" hidden")
            && html.contains("<script src=\"/static/edit.js\" defer></script>"),
        "{html}"
    );
    // The remark is too long, so the page comes back, with the edit laid out.
    let resp = form_post(
        &link,
        &format!(
            "value=Allow&command=rm+-rf+build%2Fcache&remark={}",
            "x".repeat(2001)
        ),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.unwrap();
    assert!(
        html.contains("id=\"edit-preview\" aria-live=\"polite\">")
            && html.contains("rm -rf <del>build/</del><ins>build/cache</ins>"),
        "{html}"
    );
    assert_eq!(status_of(&srv, &h).await, "pending");
    let resp = get(&srv, srv.url("/static/edit.js")).await;
    assert_eq!(resp.status(), StatusCode::OK);
    srv.stop().await;
}
