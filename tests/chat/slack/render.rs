//! What sayso renders for Slack, checked without the server: Block Kit shapes, signatures,
//! an outage's retries and Socket Mode.

use super::*;

fn sample_asks() -> Vec<(&'static str, ChatAsk)> {
    let base = ChatAsk {
        title: "deploy-bot".into(),
        heading: None,
        question: "Deploy v1.2 to production?".into(),
        context: Some(
            "## Changes\n\n- **3** files, see [CI](https://ci.example/7)\n- <!channel> & <@U1>\n\n```\nmake deploy\n```"
                .into(),
        ),
        command: None,
        controls: Controls::Link,
        link: "http://127.0.0.1:9/a/abc".into(),
        notes: vec![],
        t: Default::default(),
    };
    let button = |label: &str, code: &str, style, recommended| ChatButton {
        label: label.into(),
        value: button_value(Uuid::nil(), code),
        style,
        recommended,
    };
    let mut approval = base.clone();
    approval.command = Some("$ kubectl rollout restart deploy/web && echo '<!here>'".into());
    approval.controls = Controls::Buttons(vec![
        button("Allow", "a", ButtonStyle::Primary, false),
        button("Deny", "d", ButtonStyle::Danger, false),
    ]);
    let mut choose = base.clone();
    choose.controls = Controls::Buttons(
        (0..5)
            .map(|i| {
                button(
                    &format!("Option {i} {}", "w".repeat(i * 30)),
                    &format!("o{i}"),
                    ButtonStyle::Plain,
                    i == 2,
                )
            })
            .collect(),
    );
    let mut text = base.clone();
    text.controls = Controls::Reply {
        placeholder: Some("e.g. blue".into()),
    };
    let mut huge = approval.clone();
    huge.title = "P".repeat(500);
    huge.heading = Some("Reminder".into());
    huge.question = "Q <!channel> & ".repeat(600);
    huge.context = Some(
        (0..3000)
            .map(|i| format!("* item {i} `x`"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    huge.notes = (0..30).map(|i| format!("{i} more are waiting")).collect();
    vec![
        ("approval", approval),
        ("choose", choose),
        ("text", text),
        ("link", base),
        ("huge", huge),
    ]
}

#[tokio::test]
async fn slack_messages_and_modals_keep_to_block_kit() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = standin.api(BOT_TOKEN);
    let decision = Uuid::now_v7();
    for (name, ask) in sample_asks() {
        let msg = slack_blocks::ask_message(&ask, decision, Some("1 of 2 allowed: ana"));
        let (channel, ts) = api
            .post_message("U0ANA", &msg)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(channel, "D0ANA");
        let settled = slack_blocks::settled_message(&ask, "Allowed by ana from Slack, 04:12 UTC");
        api.update(&channel, &ts, &settled).await.unwrap();
        api.open_view(
            &standin.trigger(),
            &slack_blocks::text_modal(
                &ask.question,
                ask.command.as_deref(),
                decision,
                Some("e.g. blue"),
            ),
        )
        .await
        .unwrap();
        api.open_view(
            &standin.trigger(),
            &slack_blocks::deny_modal(&ask.question, ask.command.as_deref(), decision),
        )
        .await
        .unwrap();
    }
    assert_eq!(standin.problems(), Vec::<String>::new());
    if let Some(python) = slack_sdk() {
        let items = sent_items(&standin);
        assert_eq!(items.len(), 5 * 4);
        assert_eq!(sdk_problems(python, &items), Vec::<String>::new());
    }
}

/// The checks above can fail: a message or modal out of Slack's shapes is refused by the
/// stand-in and by slack_sdk alike.
#[tokio::test]
async fn slack_standin_and_sdk_refuse_what_slack_would() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = standin.api(BOT_TOKEN);
    let button = |text: &str, action: &str| json!({"type": "button", "text": {"type": "plain_text", "text": text}, "action_id": action, "value": "v"});
    let bad: Vec<(&str, Vec<Value>)> = vec![
        (
            "a long button",
            vec![json!({"type": "actions", "elements": [button(&"x".repeat(76), "a")]})],
        ),
        (
            "a long section",
            vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": "x".repeat(3001)}})],
        ),
        (
            "a mention",
            vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": "hi <!channel>"}})],
        ),
        (
            "a disguised link",
            vec![
                json!({"type": "section", "text": {"type": "mrkdwn", "text": "<https://evil.example|Allow>"}}),
            ],
        ),
        (
            "26 buttons",
            vec![
                json!({"type": "actions", "elements": (0..26).map(|i| button("b", &format!("a{i}"))).collect::<Vec<_>>()}),
            ],
        ),
        ("51 blocks", vec![json!({"type": "divider"}); 51]),
        ("an unknown block", vec![json!({"type": "bogus"})]),
    ];
    for (name, blocks) in &bad {
        let msg = SlackMessage {
            text: "t".into(),
            blocks: blocks.clone(),
        };
        let err = api.post_message("U0ANA", &msg).await.unwrap_err();
        assert!(matches!(err, CallError::Failed(_)), "{name}: {err:?}");
    }
    let calls = standin.calls_to("chat.postMessage");
    assert_eq!(calls.len(), bad.len());
    for (call, (name, _)) in calls.iter().zip(&bad) {
        assert!(!call.problems.is_empty(), "the stand-in let {name} through");
    }
    // chat.update only on a ts the stand-in returned, in its conversation.
    let ok = SlackMessage {
        text: "t".into(),
        blocks: vec![],
    };
    let (channel, ts) = api.post_message("U0ANA", &ok).await.unwrap();
    assert!(
        api.update(&channel, "1712000000.999999", &ok)
            .await
            .is_err()
    );
    assert!(api.update("D0BO", &ts, &ok).await.is_err());
    // A modal whose title is too long, and a trigger that was never issued.
    let mut view = slack_blocks::deny_modal("Deploy?", Some("make deploy"), Uuid::now_v7());
    view["title"]["text"] = json!("x".repeat(25));
    assert!(api.open_view(&standin.trigger(), &view).await.is_err());
    assert!(
        api.open_view(
            "1.2.3",
            &slack_blocks::deny_modal("Deploy?", Some("make deploy"), Uuid::now_v7())
        )
        .await
        .is_err()
    );
    // Another token is not the bot's.
    let stranger = standin.api("xoxb-someone-else");
    let err = stranger.post_message("U0ANA", &ok).await.unwrap_err();
    assert!(err.text().contains("invalid_auth"), "{err:?}");
    if let Some(python) = slack_sdk() {
        // slack_sdk's models check lengths and types, not mentions or counts of elements.
        let items: Vec<Value> = bad
            .iter()
            .filter(|(name, _)| {
                matches!(
                    *name,
                    "a long button" | "a long section" | "an unknown block"
                )
            })
            .map(|(_, b)| json!({"blocks": b}))
            .chain([json!({"view": view})])
            .collect();
        let problems = sdk_problems(python, &items);
        assert_eq!(problems.len(), items.len(), "{problems:?}");
    }
}

#[test]
fn slack_signatures_made_by_slack_sdk_verify() {
    let Some(python) = slack_sdk() else { return };
    let body = format!(
        "payload={}",
        url::form_urlencoded::byte_serialize(
            json!({"type": "block_actions", "user": {"id": "U0ANA"}})
                .to_string()
                .as_bytes()
        )
        .collect::<String>()
    );
    let ts = now().to_string();
    let signature = sdk_sign(python, SIGNING_SECRET, &ts, &body);
    assert_eq!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&ts),
            Some(&signature),
            body.as_bytes(),
            now()
        ),
        Ok(())
    );
    // sayso's signer agrees with Slack's byte for byte.
    assert_eq!(
        slack_signature::sign(SIGNING_SECRET, &ts, body.as_bytes()),
        signature
    );
    // Another secret, another body, an old timestamp: refused.
    let other = sdk_sign(python, "another-secret", &ts, &body);
    assert_eq!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&ts),
            Some(&other),
            body.as_bytes(),
            now()
        ),
        Err(slack_signature::SignatureError::Mismatch)
    );
    let changed = body.replace("U0ANA", "U0BO");
    assert_eq!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&ts),
            Some(&signature),
            changed.as_bytes(),
            now()
        ),
        Err(slack_signature::SignatureError::Mismatch)
    );
    let old = (now() - 301).to_string();
    let old_signature = sdk_sign(python, SIGNING_SECRET, &old, &body);
    assert!(matches!(
        slack_signature::verify(
            SIGNING_SECRET,
            Some(&old),
            Some(&old_signature),
            body.as_bytes(),
            now()
        ),
        Err(slack_signature::SignatureError::Stale(_))
    ));
}

#[tokio::test]
async fn slack_outage_is_retried_and_named() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = standin.api(BOT_TOKEN);
    let msg = slack_blocks::ask_message(&sample_asks()[0].1, Uuid::now_v7(), None);
    standin.fail_next(2);
    for _ in 0..2 {
        let err = api.post_message("U0ANA", &msg).await.unwrap_err();
        assert!(
            matches!(&err, CallError::Retry(why) if why.contains("503")),
            "{err:?}"
        );
    }
    api.post_message("U0ANA", &msg).await.unwrap();
    // A person who left the workspace is a failure for good, named.
    let err = api.post_message("U0GONE", &msg).await.unwrap_err();
    assert_eq!(
        err,
        CallError::Failed("slack chat.postMessage: user_not_found".into())
    );
}

#[tokio::test]
async fn slack_socket_mode_acks_reconnects_and_answers_modals() {
    common::server::init_tls();
    let standin = SlackStandIn::start().await;
    let api = standin.api(BOT_TOKEN);
    let seen: Arc<Mutex<Vec<Envelope>>> = Arc::default();
    let handler: Handler = {
        let seen = seen.clone();
        Arc::new(move |envelope: Envelope| {
            let seen = seen.clone();
            Box::pin(async move {
                let answer = (envelope.payload["type"] == "view_submission").then(
                    || json!({"response_action": "errors", "errors": {"answer": "too long"}}),
                );
                seen.lock().unwrap().push(envelope);
                answer
            })
        })
    };
    let task = tokio::spawn(slack_socket::run(api, APP_TOKEN.into(), handler));
    let press = json!({"type": "block_actions", "user": {"id": "U0ANA"}, "actions": []});
    standin
        .send_envelope(json!({"envelope_id": "e1", "type": "interactive", "accepts_response_payload": false, "payload": press}))
        .await;
    standin.acked("the ack of e1", 1).await;
    assert_eq!(standin.acks()[0], json!({"envelope_id": "e1"}));
    // A modal's answer goes back with its ack.
    standin
        .send_envelope(json!({"envelope_id": "e2", "type": "interactive", "accepts_response_payload": true, "payload": {"type": "view_submission", "user": {"id": "U0ANA"}}}))
        .await;
    standin.acked("the ack of e2", 2).await;
    assert_eq!(standin.acks()[1]["payload"]["response_action"], "errors");
    // Events that are not interactions are acknowledged and not handled.
    standin
        .send_envelope(json!({"envelope_id": "e3", "type": "events_api", "payload": {}}))
        .await;
    standin.acked("the ack of e3", 3).await;
    standin
        .wait_for("both interactions handled", |_| {
            (seen.lock().unwrap().len() == 2).then_some(())
        })
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "the events_api envelope was handled"
    );
    // Slack asks for a new connection: one is opened at once.
    assert_eq!(standin.socket_connections(), 1);
    standin
        .send_envelope(json!({"type": "disconnect", "reason": "refresh_requested"}))
        .await;
    standin
        .wait_for("a second connection", |s| {
            (s.socket_connections() == 2).then_some(())
        })
        .await;
    // A connection that drops without a word is opened again too, after a pause.
    tokio::time::sleep(Duration::from_millis(200)).await;
    standin.drop_socket();
    standin
        .wait_for("a third connection", |s| {
            (s.socket_connections() == 3).then_some(())
        })
        .await;
    standin
        .send_envelope(json!({"envelope_id": "e4", "type": "interactive", "payload": press}))
        .await;
    standin.acked("the ack of e4", 4).await;
    // Each connection was asked for with the app-level token (the stand-in refuses others).
    let opens = standin.calls_to("apps.connections.open");
    assert_eq!(opens.len(), 3);
    assert!(opens.iter().all(|c| c.answer.is_ok()));
    task.abort();
}
