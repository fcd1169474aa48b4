//! The pages in the person's language: German chosen by the browser's `Accept-Language`
//! (for a link opened on a browser bound to nobody), and by the person's `--lang` (for
//! their feed, whatever the browser asks for). The agent's words stay as written.

use serde_json::json;

use crate::checks::assert_fit_for_a_phone;
use crate::common::browser::Browser;
use crate::common::db::fresh_sqlite_url;
use crate::common::server::{TestServer, s};
use crate::support::{close, feed_url};

async fn html_lang(b: &Browser) -> String {
    b.js("return document.documentElement.lang", vec![])
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_german_browser_and_a_german_person_get_german_pages_at_phone_width() {
    let db = fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    let h = srv
        .create(
            json!({"question": "Deploy the billing service now?", "kind": "text",
            "allow_remark": true}),
        )
        .await;

    // A browser asking for Austrian German, then German, then English: the decision's link
    // (no person known) is in German.
    let Some(b) = Browser::start_accepting(Some("de-AT,de;q=0.9,en;q=0.5")).await else {
        return;
    };
    b.goto(s(&h, "web_url")).await;
    assert_eq!(html_lang(&b).await, "de");
    let text = b.text().await;
    for german in [
        "Deine Antwort",
        "Antwort senden",
        "Ablehnen",
        "Anmerkung",
        "Läuft in ",
    ] {
        assert!(text.contains(german), "{german:?} not on the page: {text}");
    }
    assert!(text.contains("Deploy the billing service now?"), "{text}");
    assert!(!text.contains("Send answer"), "{text}");
    assert_fit_for_a_phone(&b, "answer, German").await;
    b.screenshot("lang-de-answer").await;

    // A tool approval's page: its title and labels German, the command as the agent gave it.
    let approval = srv
        .create(
            json!({"question": "Claude Code wants to run a Bash command",
            "kind": "choose", "options": ["Allow", "Deny"],
            "approval": {"harness": "claude", "tool_name": "Bash",
                         "tool_input": {"command": "make release"}}}),
        )
        .await;
    b.goto(s(&approval, "web_url")).await;
    assert_eq!(html_lang(&b).await, "de");
    let text = b.text().await;
    for german in [
        "Claude Code möchte einen Bash-Befehl ausführen",
        "Werkzeug",
        "Offen noch ",
    ] {
        assert!(text.contains(german), "{german:?} not on the page: {text}");
    }
    assert!(text.contains("make release"), "{text}");
    assert_fit_for_a_phone(&b, "approval, German").await;
    b.screenshot("lang-de-approval").await;
    b.close().await;

    // The inbox's person chose German: an English browser opening their feed reads it in
    // German; the agent's question stays as written.
    srv.svc
        .set_person(
            "default",
            "default",
            &sayso::service::PersonSettings {
                lang: Some("de".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    srv.create(json!({"question": "Rotate the staging API key", "kind": "todo"}))
        .await;
    let Some(b) = Browser::start_accepting(Some("en-US,en")).await else {
        return;
    };
    b.goto(&feed_url(&srv).await).await;
    assert_eq!(html_lang(&b).await, "de");
    let text = b.text().await;
    for german in [
        "warten auf dich",
        "Entscheidungen",
        "Aufgaben",
        "Erledigt",
        "Auslassen",
        "Zuletzt",
    ] {
        assert!(text.contains(german), "{german:?} not in the feed: {text}");
    }
    assert!(text.contains("Rotate the staging API key"), "{text}");
    assert!(!text.contains("waiting for you"), "{text}");
    // The feed's scripts have their words in German too (passkey.js, feed.js).
    let said = b
        .js(
            "return JSON.parse(document.getElementById('words').getAttribute('data-words'))\
             ['passkey-sending']",
            vec![],
        )
        .await;
    assert_eq!(said, "Wird gesendet…");
    assert_fit_for_a_phone(&b, "feed, German").await;
    b.screenshot("lang-de-feed").await;
    close(b, srv).await;
}
