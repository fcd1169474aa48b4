//! A tool approval whose policy rule wants a passkey, answered in Chromium with its virtual
//! authenticator (the WebDriver extension commands of WebAuthn §11): a passkey is added from
//! the feed at 360 px, an Allow without it is refused and changes nothing, an Allow through
//! the page counts, a replayed assertion is refused, and Deny needs no passkey. A second
//! passkey is added only with the first, which the page asks for before making it.

use axum::http::Method;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::approval::passkey_guarded;
use crate::common::browser::Browser;
use crate::common::db::fresh_sqlite_url;
use crate::common::server::{TestServer, s, send};
use crate::support::{awaited, close, feed_url};

/// A virtual authenticator (`POST /session/{id}/webauthn/authenticator`) on `transport`
/// (`internal` for the device's own, `usb` for a security key) that verifies the person (as
/// a phone's screen lock would) without asking; its id.
pub(crate) async fn add_authenticator(b: &Browser, transport: &'static str) -> String {
    let body = json!({
        "protocol": "ctap2",
        "transport": transport,
        "hasResidentKey": true,
        "hasUserVerification": true,
        "isUserVerified": true,
    });
    let added = b
        .command(Method::POST, "webauthn/authenticator", Some(body))
        .await;
    added
        .as_str()
        .unwrap_or_else(|| panic!("authenticator id: {added}"))
        .to_string()
}

/// How many credentials the authenticator holds.
async fn credentials_on(b: &Browser, authenticator: &str) -> usize {
    let path = format!("webauthn/authenticator/{authenticator}/credentials");
    let held = b.command(Method::GET, &path, None).await;
    held.as_array().map_or(0, Vec::len)
}

async fn remove_authenticator(b: &Browser, authenticator: &str) {
    let path = format!("webauthn/authenticator/{authenticator}");
    b.command(Method::DELETE, &path, None).await;
}

/// Asks the passkey on the approval page open in the browser, the way its script does, and
/// hands back the assertion instead of posting it.
const GET_ASSERTION: &str = r#"
const done = arguments[arguments.length - 1];
const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const b64 = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
fetch(document.getElementById('answer').getAttribute('data-passkey-url'))
  .then((r) => r.json())
  .then((o) => navigator.credentials.get({publicKey: {
    challenge: bytes(o.challenge), rpId: o.rpId, userVerification: o.userVerification,
    allowCredentials: o.allowCredentials.map((c) => ({type: 'public-key', id: bytes(c.id)})),
  }}))
  .then((c) => done({
    id: b64(c.rawId),
    client_data_json: b64(c.response.clientDataJSON),
    authenticator_data: b64(c.response.authenticatorData),
    signature: b64(c.response.signature),
  }))
  .catch((e) => done({error: String(e)}));
"#;

/// The approval link the bound feed shows for the pending question `question`.
async fn link_from_feed(b: &Browser, srv: &TestServer, question: &str) -> String {
    b.goto(&srv.url("/inbox")).await;
    let href = b
        .js(
            "const a = [...document.querySelectorAll('#pending a')]
                 .find((a) => a.textContent.includes(arguments[0]));
             return a ? a.href : null;",
            vec![json!(question)],
        )
        .await;
    href.as_str()
        .unwrap_or_else(|| panic!("the feed lists no {question:?}"))
        .to_string()
}

async fn assertion_on_page(b: &Browser, link: &str) -> Value {
    b.goto(link).await;
    let a = b
        .client
        .execute_async(GET_ASSERTION, vec![])
        .await
        .expect("the assertion script ran");
    assert!(a.get("error").is_none(), "no assertion: {a}");
    a
}

#[tokio::test]
async fn an_allow_that_needs_a_passkey_counts_only_with_it() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let db = fresh_sqlite_url();
    let srv = TestServer::start_on_localhost(&db.url).await;
    add_authenticator(&b, "internal").await;

    // Adding a passkey from the feed link's page, at phone width.
    b.goto(&feed_url(&srv).await).await;
    b.wait_for("#passkey:not([hidden]) #passkey-add").await;
    assert_fit_for_a_phone(&b, "feed with the passkey offer").await;
    b.click("#passkey-add").await;
    let status = wait_for_text(&b, "#passkey-add-status", "passkey was added").await;
    assert!(status.contains("A passkey was added"), "{status}");
    b.screenshot("passkey-added").await;

    // No API key adds one: the routes take a bound device only.
    let (st, body) = send(
        srv.req(reqwest::Method::GET, "/inbox/passkeys/new")
            .bearer_auth(&srv.key),
    )
    .await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{body}");

    // An approval whose rule wants the passkey.
    let h = srv
        .create(passkey_guarded("git push --force origin main"))
        .await;
    let id = s(&h, "decision_id").to_string();
    assert_eq!(srv.get(&id).await["step_up"], "passkey");
    let link = link_from_feed(&b, &srv, "git push --force origin main").await;

    // A plain Allow, even through the person's own link, is refused and changes nothing.
    let (st, body) = send(srv.client.post(&link).json(&json!({"value": "Allow"}))).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let detail = &body["error"]["details"][0];
    assert_eq!(detail["path"], "passkey", "{body}");
    assert!(
        detail["message"]
            .as_str()
            .unwrap()
            .contains("needs your passkey"),
        "{body}"
    );
    let d = srv.get(&id).await;
    assert_eq!(d["status"], "pending", "{d}");

    // The page says so, and its Allow asks the passkey (the virtual authenticator) first.
    b.goto(&link).await;
    let notice = b.text_of("#step-up").await;
    assert_eq!(notice, "Allow needs your passkey.");
    assert_fit_for_a_phone(&b, "approval needing a passkey").await;
    b.screenshot("approval-step-up").await;
    b.click_and_wait("#allow").await;
    let d = awaited(&srv, &h).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("Allow")),
        "{d}"
    );
    assert_eq!(result_status(&b).await, "allowed");
    let events = srv.svc.store().events(id.parse().unwrap()).await.unwrap();
    let answered = events
        .iter()
        .find(|e| e.kind.as_str() == "answered")
        .expect("an answered event");
    assert!(
        answered.detail["step_up"]["passkey"].is_string(),
        "the audit trail names the passkey: {:?}",
        answered.detail
    );

    // An assertion made for one approval: it allows that one once, and nothing else.
    let second = srv.create(passkey_guarded("terraform destroy")).await;
    let third = srv.create(passkey_guarded("kubectl delete ns prod")).await;
    let link2 = link_from_feed(&b, &srv, "terraform destroy").await;
    let link3 = link_from_feed(&b, &srv, "kubectl delete ns prod").await;
    let assertion = assertion_on_page(&b, &link2).await;
    let with = |value: &str| json!({"value": value, "passkey": assertion});
    let (st, body) = send(srv.client.post(&link3).json(&with("Allow"))).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("challenge"),
        "{body}"
    );
    assert_eq!(srv.get(s(&third, "decision_id")).await["status"], "pending");
    let (st, body) = send(srv.client.post(&link2).json(&with("Allow"))).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(body["outcome"], "Allow");
    let (st, body) = send(srv.client.post(&link2).json(&with("Allow"))).await;
    assert_eq!(
        st,
        StatusCode::CONFLICT,
        "a replay on the answered one: {body}"
    );
    assert_eq!(awaited(&srv, &second).await["outcome"], "Allow");

    // Deny needs no passkey.
    b.goto(&link3).await;
    b.click_and_wait("#deny").await;
    let d = awaited(&srv, &third).await;
    assert_eq!(d["outcome"], "Deny", "{d}");

    close(b, srv).await;
}

#[tokio::test]
async fn a_second_passkey_is_added_only_with_the_first() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let db = fresh_sqlite_url();
    let srv = TestServer::start_on_localhost(&db.url).await;
    let owner = srv.default_inbox().await.id;
    let passkeys = || async { srv.svc.store().passkeys(owner).await.unwrap() };

    // The first passkey, on the phone itself: the bound device is all it takes.
    let phone = add_authenticator(&b, "internal").await;
    b.goto(&feed_url(&srv).await).await;
    b.wait_for("#passkey:not([hidden]) #passkey-add").await;
    b.click("#passkey-add").await;
    let status = wait_for_text(&b, "#passkey-add-status", "passkey was added").await;
    assert!(status.starts_with("A passkey was added"), "{status}");
    assert_eq!(passkeys().await.len(), 1);

    // A second one takes the first: the page asks the phone's passkey on the first tap...
    b.click("#passkey-add").await;
    let status = wait_for_any(&b, "#passkey-add-status", &["Now tap", "No passkey"]).await;
    assert!(status.starts_with("Your passkey agreed"), "{status}");
    let button = b.text_of("#passkey-add").await;
    assert_eq!(button, "Make the new passkey");
    assert_fit_for_a_phone(&b, "feed asking for the new passkey").await;
    b.screenshot("passkey-consented").await;
    // ...and makes the new one, on a security key, on the second.
    remove_authenticator(&b, &phone).await;
    let key = add_authenticator(&b, "usb").await;
    b.click("#passkey-add").await;
    let status = wait_for_any(
        &b,
        "#passkey-add-status",
        &["passkey was added", "No passkey"],
    )
    .await;
    assert!(status.starts_with("A passkey was added"), "{status}");
    let now = passkeys().await;
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(
        now[0].last_used_at.is_some(),
        "the phone's passkey consented: {now:?}"
    );
    assert_eq!(credentials_on(&b, &key).await, 1);

    // Without either of them (another browser, bound by the same feed link), none is added.
    remove_authenticator(&b, &key).await;
    let stranger = add_authenticator(&b, "internal").await;
    b.goto(&feed_url(&srv).await).await;
    b.wait_for("#passkey:not([hidden]) #passkey-add").await;
    b.click("#passkey-add").await;
    let status = wait_for_any(&b, "#passkey-add-status", &["agreed", "No passkey"]).await;
    assert!(status.starts_with("No passkey was added"), "{status}");
    assert_eq!(passkeys().await.len(), 2);
    assert_eq!(credentials_on(&b, &stranger).await, 0);

    close(b, srv).await;
}

/// Waits (up to 20 s) until the element's text contains one of `wanted`; returns the text.
async fn wait_for_any(b: &Browser, css: &str, wanted: &[&str]) -> String {
    let start = std::time::Instant::now();
    loop {
        let text = b.find(css).await.text().await.unwrap_or_default();
        if wanted.iter().any(|w| text.contains(w))
            || start.elapsed() > std::time::Duration::from_secs(20)
        {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Waits (up to 20 s) until the element's text contains `want`; returns the text.
pub(crate) async fn wait_for_text(b: &Browser, css: &str, want: &str) -> String {
    let start = std::time::Instant::now();
    loop {
        let text = b.find(css).await.text().await.unwrap_or_default();
        if text.contains(want) || start.elapsed() > std::time::Duration::from_secs(20) {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
