//! The pages as a newcomer meets them in Chromium at 360 px: the feed's first visit with its
//! device offers under the header, the feed's kinds in words and a to-do's context, an
//! answer page's way back and its remark typed before the tap, times in the person's zone,
//! an approval's wait told as one under way, and the device offers folded into "This device"
//! once this device has push on and the person a passkey.

use serde_json::json;
use time::OffsetDateTime;

use crate::checks::{assert_fit_for_a_phone, result_status};
use crate::common::browser::Browser;
use crate::common::passkey::give_passkey;
use crate::common::people::own_feed_link;
use crate::common::server::{TestServer, s};
use crate::support::{awaited, close, feed_url, setup};
use sayso::service::PersonSettings;

/// This browser's push subscription, as a browser with push on holds one. No push service
/// can run here (Chromium's needs the internet), so the subscription the page reads is made
/// up: `getSubscription` answers one made with the page's own key. Permission is granted
/// for real, through DevTools.
const PUSH_ON: &str = "
PushManager.prototype.getSubscription = function () {
  var key = document.getElementById('push-subscribe').getAttribute('data-key');
  var raw = atob(key.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((key.length + 3) % 4));
  var bytes = new Uint8Array(raw.length);
  for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return Promise.resolve({
    options: { applicationServerKey: bytes.buffer },
    toJSON: function () { return { endpoint: 'https://push.example.com/sayso-test', keys: {} }; }
  });
};";

async fn approval_link(srv: &TestServer, handle: &serde_json::Value) -> String {
    own_feed_link(srv, s(handle, "decision_id")).await
}

async fn visible(b: &Browser, css: &str) -> bool {
    b.find(css).await.is_displayed().await.unwrap()
}

#[tokio::test]
async fn a_newcomer_finds_the_way_back_reads_local_times_and_keeps_the_remark() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let own = srv.svc.list_people("default").await.unwrap()[0].clone();
    let zone = PersonSettings {
        tz: Some("Asia/Kolkata".into()),
        ..PersonSettings::default()
    };
    srv.svc
        .set_person("default", &own.name, &zone)
        .await
        .unwrap();

    // First visit: the device offers stand plainly under the header.
    let ask = srv
        .create(json!({"question": "Ship v2 today?", "kind": "bool"}))
        .await;
    let by = OffsetDateTime::now_utc() + time::Duration::seconds(9 * 60 + 40);
    let approval = srv
        .create(json!({"question": "Run a command?", "kind": "choose",
            "options": ["Allow", "Deny"],
            "approval": {"harness": "claude", "tool_name": "Bash",
                         "tool_input": {"command": "cargo test --workspace"},
                         "answer_by": by.format(&time::format_description::well_known::Rfc3339).unwrap()}}))
        .await;
    srv.create(json!({"question": "Which region?", "kind": "choose", "options": ["eu", "us"]}))
        .await;
    srv.create(json!({"question": "Rotate the staging key", "kind": "todo",
        "context_md": "In **vault**, path `kv/staging`\u{200B}; tell #ops after."}))
        .await;
    b.goto(&feed_url(&srv).await).await;
    assert!(visible(&b, "#device-offers").await);
    assert!(
        visible(&b, "#passkey-add").await,
        "a first visit sees the offers"
    );
    assert!(!b.has("#this-device").await);
    let pending = b.text_of("#pending").await;
    for words in [
        "Approval · expires",
        "Yes or no · expires",
        "Choice · expires",
    ] {
        assert!(pending.contains(words), "{words}: {pending}");
    }
    let todos = b.text_of("#todos").await;
    assert!(
        todos.contains("In vault, path kv/staging⟨U+200B⟩"),
        "{todos}"
    );
    assert_fit_for_a_phone(&b, "feed, first visit").await;
    b.screenshot("reader-feed-first-visit").await;

    // An answer page: the way back, and a remark typed before the tap goes with it.
    b.goto(s(&ask, "web_url")).await;
    assert_eq!(
        b.attr_of("#to-feed", "href").await.as_deref(),
        Some("/inbox")
    );
    let expires = b.text_of("#expires").await;
    assert!(expires.ends_with(" IST"), "{expires}");
    b.screenshot("reader-answer-page").await;
    b.type_into("#remark", "after the standup").await;
    b.click_and_wait("button[name=value][value=yes]").await;
    let d = awaited(&srv, &ask).await;
    assert_eq!(
        (&d["outcome"], &d["remark"]),
        (&json!(true), &json!("after the standup"))
    );
    assert_eq!(result_status(&b).await, "answered");
    let when = b.text_of("#result .when").await;
    assert!(when.ends_with(" IST"), "{when}");
    b.screenshot("reader-answered").await;
    b.click_and_wait("#to-feed").await;
    assert_eq!(b.path().await, "/inbox");

    // The approval: the wait is under way, the reason box above Allow and Deny.
    b.goto(&approval_link(&srv, &approval).await).await;
    let expires = b.text_of(".expires").await;
    assert!(
        expires.starts_with("The agent waits for your answer for 9 more minutes, until ")
            && expires.ends_with(" IST"),
        "{expires}"
    );
    assert!(visible(&b, "#to-feed").await && visible(&b, "#deny").await);
    b.screenshot("reader-approval").await;

    // A person with a passkey, on a device with push on: the offers fold into "This device".
    give_passkey(&srv, &own).await;
    b.cdp(
        "Browser.grantPermissions",
        json!({"origin": srv.base, "permissions": ["notifications"]}),
    )
    .await;
    b.cdp(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": PUSH_ON}),
    )
    .await;
    b.goto(&format!("{}/inbox", srv.base)).await;
    b.wait_for("#this-device:not([hidden])").await;
    assert!(b.has("#this-device #device-offers").await);
    assert!(!visible(&b, "#passkey-add").await, "folded away");
    b.screenshot("reader-feed-folded").await;
    b.click("#this-device summary").await;
    assert!(visible(&b, "#passkey-add").await, "one tap away");
    b.js(
        "document.getElementById('this-device').scrollIntoView()",
        vec![],
    )
    .await;
    b.screenshot("reader-feed-this-device-open").await;

    // The same person on a device without push on sees them plainly again.
    b.cdp("Browser.resetPermissions", json!({})).await;
    b.goto(&format!("{}/inbox", srv.base)).await;
    b.wait_for("#device-offers:not([hidden])").await;
    assert!(!b.has("#this-device #device-offers").await);
    close(b, srv).await;
}
