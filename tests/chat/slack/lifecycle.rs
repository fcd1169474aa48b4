//! A Slack question's life beyond the press: expiry, outages, Socket Mode's envelopes,
//! escalation, the command line's test message, a modal that cannot open, PostgreSQL, and an
//! allow that wants a passkey.

use super::rig::*;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_expiry_updates_the_message() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack
        .create(
            json!({"question": "Quick?", "kind": "bool", "ttl_seconds": 10, "approvers": ["ana"]}),
        )
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    slack.wait_status(&id, "expired").await;
    let updated = slack
        .standin
        .updated("the message expired", &message.ts)
        .await;
    assert!(
        shown_text(&updated).contains("Expired"),
        "{}",
        shown_text(&updated)
    );
    assert!(updated.blocks.iter().all(|b| b["type"] != "actions"));
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_outage_then_the_message_arrives() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    slack.person("gone", Some("U0GONE")).await;
    slack.standin.fail_next(3);
    let id = slack
        .create(json!({"question": "Still there?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert!(shown_text(&message).contains("Still there?"));
    let failed = slack
        .standin
        .calls()
        .iter()
        .filter(|c| c.answer == Err("503".into()))
        .count();
    assert_eq!(failed, 3);
    // The retries are in the decision's history, with Slack's answer named.
    let events = common::server::send(
        slack
            .srv
            .req(reqwest::Method::GET, &format!("/v1/decisions/{id}/events")),
    )
    .await
    .1;
    let text = events.to_string();
    assert!(text.contains("503"), "{text}");
    // A user who left the workspace: failed for good, with Slack's error named.
    let gone = slack
        .create(json!({"question": "Anyone?", "kind": "bool", "approvers": ["gone"]}))
        .await;
    let mut seen = String::new();
    for _ in 0..100 {
        seen = common::server::send(slack.srv.req(
            reqwest::Method::GET,
            &format!("/v1/decisions/{gone}/events"),
        ))
        .await
        .1
        .to_string();
        if seen.contains("user_not_found") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen.contains("user_not_found"), "{seen}");
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_socket_mode_answers_once_per_envelope() {
    let Some(slack) = Slack::start(true).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack
        .create(json!({"question": "Over the socket?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let press = block_actions(&slack.standin, &message, button(&message, "Yes"), "U0ANA");
    let envelope = json!({"envelope_id": "57d6a792-4d35-4d0b-b6aa-3361493e1caf", "type": "interactive",
                          "accepts_response_payload": false, "payload": press});
    slack.standin.send_envelope(envelope.clone()).await;
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], true);
    assert_eq!(d["answers"][0]["channel"], "slack");
    // Slack sends an envelope again when it missed the ack: acked, not taken twice.
    slack.standin.send_envelope(envelope).await;
    slack.standin.acked("two acks", 2).await;
    assert!(
        slack
            .standin
            .acks()
            .iter()
            .all(|a| a["envelope_id"] == "57d6a792-4d35-4d0b-b6aa-3361493e1caf")
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        slack.standin.responses().is_empty(),
        "the second copy said nothing: {:?}",
        slack.standin.responses()
    );
    assert_eq!(
        slack.decision(&id).await["answers"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A text through its modal: the refusal goes back with the submission's ack.
    let text = slack
        .create(json!({"question": "Release name?", "kind": "text", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    let press = block_actions(
        &slack.standin,
        &message,
        button(&message, "Answer"),
        "U0ANA",
    );
    slack
        .standin
        .send_envelope(json!({"envelope_id": "e-open", "type": "interactive", "payload": press}))
        .await;
    let opened = slack.standin.view_opened("the answer modal", 0).await;
    let view = opened.body["view"].clone();
    for (id, said) in [("e-empty", ""), ("e-named", "Aurora")] {
        slack
            .standin
            .send_envelope(
                json!({"envelope_id": id, "type": "interactive", "accepts_response_payload": true,
                                  "payload": view_submission(&view, "U0ANA", Some(said))}),
            )
            .await;
        let ack = slack
            .standin
            .wait_for("the submission's ack", |s| {
                s.acks().into_iter().find(|a| a["envelope_id"] == id)
            })
            .await;
        if said.is_empty() {
            assert_eq!(ack["payload"]["response_action"], "errors", "{ack}");
        } else {
            assert!(ack.get("payload").is_none(), "{ack}");
        }
    }
    assert_eq!(
        slack.wait_status(&text, "answered").await["outcome"],
        "Aurora"
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_escalation_asks_and_says_so_where_it_first_asked() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    slack.person("bo", Some("U0BO")).await;
    let mut body = approval("make migrate", &["ana"]);
    body["escalate_after_s"] = json!(1);
    body["escalate_to"] = json!(["bo"]);
    let id = slack.create(body).await;
    let to_ana = slack.standin.message_to("U0ANA", 0).await;
    let to_bo = slack.standin.message_to("U0BO", 0).await;
    let header = &to_bo.blocks[0]["text"]["text"];
    assert!(
        header.as_str().unwrap().starts_with("Escalated to you"),
        "{header}"
    );
    // ana's message says where it went, buttons kept.
    let told = showing(
        &slack.standin,
        "ana told it escalated",
        &to_ana.ts,
        "Escalated to bo",
    )
    .await;
    assert!(told.blocks.iter().any(|b| b["type"] == "actions"));
    slack.press(&to_bo, "Allow", "U0BO").await;
    slack.wait_status(&id, "answered").await;
    for ts in [&to_ana.ts, &to_bo.ts] {
        showing(&slack.standin, "settled", ts, "Allowed by bo from Slack").await;
    }
    slack.assert_well_formed();
}

/// `sayso person set --slack` and `sayso person test --channel slack`, the real binary with the
/// server's settings from the environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_person_test_message_from_the_command_line() {
    let standin = SlackStandIn::start().await;
    let (db, srv) = common::server::fresh_server().await;
    let sayso = |env: Vec<(&'static str, String)>, args: &'static [&'static str]| {
        let (srv, db) = (&srv, &db);
        async move {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let out = crate::cli::sayso(srv, db, &env, args).await;
            (out.status.success(), crate::cli::said(&out))
        }
    };
    let (ok, said) = sayso(vec![], &["person", "add", "ana"]).await;
    assert!(ok, "{said}");
    let (ok, said) = sayso(vec![], &["person", "set", "ana", "--slack", "U0ANA"]).await;
    assert!(ok, "{said}");
    let env = |token: &str| {
        vec![
            ("SAYSO_SLACK_BOT_TOKEN", token.to_string()),
            ("SAYSO_SLACK_SIGNING_SECRET", SIGNING_SECRET.to_string()),
            ("SAYSO_SLACK_API_URL", standin.api_url.clone()),
        ]
    };
    let (ok, said) = sayso(
        env(BOT_TOKEN),
        &["person", "test", "ana", "--channel", "slack"],
    )
    .await;
    assert!(ok, "{said}");
    assert!(said.contains("U0ANA") && said.contains("D0ANA"), "{said}");
    let posted = standin.message_to("U0ANA", 0).await;
    assert!(
        shown_text(&posted).contains("questions for ana"),
        "{}",
        shown_text(&posted)
    );
    assert_eq!(standin.problems(), Vec::<String>::new());
    // A user token instead of the bot's is refused before anything is sent, saying which.
    let (ok, said) = sayso(
        env("xoxp-123"),
        &["person", "test", "ana", "--channel", "slack"],
    )
    .await;
    assert!(!ok);
    assert!(said.contains("xoxb-"), "{said}");
    // Slack's error is named.
    let (ok, said) = sayso(
        env("xoxb-wrong"),
        &["person", "test", "ana", "--channel", "slack"],
    )
    .await;
    assert!(!ok);
    assert!(said.contains("invalid_auth"), "{said}");
    assert_eq!(standin.calls_to("chat.postMessage").len(), 2);
}

/// A dialog Slack will not open (the press's trigger_id expired): Deny denies without a
/// reason, and a text question's presser is sent their own link to the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_a_modal_that_cannot_open_falls_back() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let deny = slack.create(approval("make clean", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let mut press = block_actions(&slack.standin, &message, button(&message, "Deny"), "U0ANA");
    press["trigger_id"] = json!("1.2.expired");
    assert_eq!(slack.send(&press).await.0, 200);
    let d = slack.wait_status(&deny, "answered").await;
    assert_eq!(d["outcome"], "Deny");
    assert_eq!(
        slack.standin.calls_to("views.open")[0].answer,
        Err("invalid_trigger_id".into())
    );

    let text = slack
        .create(json!({"question": "Name?", "kind": "text", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    let mut press = block_actions(
        &slack.standin,
        &message,
        button(&message, "Answer"),
        "U0ANA",
    );
    press["trigger_id"] = json!("1.2.expired");
    assert_eq!(slack.send(&press).await.0, 200);
    let note = slack.standin.response("the page's link", 0).await;
    let said = note.1["text"].as_str().unwrap();
    let page = button(&message, "Open the page")["url"].as_str().unwrap();
    assert!(
        said.contains(&page.replace('&', "&amp;")),
        "{said} / {page}"
    );
    assert_eq!(slack.decision(&text).await["status"], "pending");
    assert_eq!(slack.standin.problems(), Vec::<String>::new());
}

/// On PostgreSQL: the messages posted, the press taken once by its signature, and the update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_on_postgres_a_press_counts_once() {
    let Some(slack) = Slack::start_on_postgres().await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack.create(approval("make deploy", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let (status, _, (body, ts, signature)) = slack.press(&message, "Allow", "U0ANA").await;
    assert_eq!(status, 200);
    assert_eq!(slack.wait_status(&id, "answered").await["outcome"], "Allow");
    let (status, why) = slack.post_raw(&body, &ts, &signature).await;
    assert_eq!(status, 401);
    assert!(why.contains("replay"), "{why}");
    showing(
        &slack.standin,
        "the message settled",
        &message.ts,
        "Allowed by ana from Slack",
    )
    .await;
    slack.assert_well_formed();
}

/// An Allow that wants the person's passkey is given on the page: no Allow button, and an
/// Allow press made up from its code is answered with the person's own link; Deny still
/// answers from Slack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_an_allow_that_wants_a_passkey_is_given_on_the_page() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let mut body = approval("make release", &["ana"]);
    body["approval"]["step_up"] = json!("passkey");
    let id = slack.create(body).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let shown = shown_text(&message);
    assert!(shown.contains("Allow on the page"), "{shown}");
    let labels: Vec<&str> = message
        .blocks
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .map(|e| e["text"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Deny", "Open the page"]);
    let made_up = json!({
        "type": "button", "action_id": "sayso.answer.a", "text": {"type": "plain_text", "text": "Allow"},
        "value": format!("{}.a", Uuid::parse_str(&id).unwrap().simple()),
    });
    let press = block_actions(&slack.standin, &message, &made_up, "U0ANA");
    assert_eq!(slack.send(&press).await.0, 200);
    let note = slack.standin.response("the page's link", 0).await;
    let said = note.1["text"].as_str().unwrap();
    assert!(
        said.contains("answered on the page") && said.contains("/a/"),
        "{said}"
    );
    assert_eq!(slack.decision(&id).await["status"], "pending");
    slack.press(&message, "Deny", "U0ANA").await;
    slack.standin.view_opened("the Deny modal", 0).await;
    let (status, _) = slack.submit("U0ANA", None).await;
    assert_eq!(status, 200);
    assert_eq!(slack.wait_status(&id, "answered").await["outcome"], "Deny");
    slack.assert_well_formed();
}
