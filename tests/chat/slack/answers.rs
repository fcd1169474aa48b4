//! Answering from Slack: presses on the message, modals, a quorum across Slack and the feed,
//! and presses that must change nothing.

use super::rig::*;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_allow_from_the_message_and_a_second_press_says_who() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack
        .create(approval("cargo publish --dry-run <!channel>", &["ana"]))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert_eq!(message.channel, "D0ANA");
    // What runs, set apart exactly; the buttons carry only the decision and the answer.
    let shown = shown_text(&message);
    assert!(
        shown.contains("cargo publish --dry-run <!channel>"),
        "{shown}"
    );
    let allow = button(&message, "Allow");
    assert_eq!(allow["style"], "primary");
    assert_eq!(button(&message, "Deny")["style"], "danger");
    assert_eq!(
        allow["value"],
        format!("{}.a", Uuid::parse_str(&id).unwrap().simple())
    );

    let (status, _, _) = slack.press(&message, "Allow", "U0ANA").await;
    assert_eq!(status, 200);
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], "Allow");
    assert_eq!(d["answers"][0]["person"], "ana");
    assert_eq!(d["answers"][0]["channel"], "slack");
    // The message changes in place: same conversation and ts, no buttons left.
    let updated = slack
        .standin
        .updated("the message settled", &message.ts)
        .await;
    assert!(
        shown_text(&updated).contains("Allowed by ana from Slack"),
        "{}",
        shown_text(&updated)
    );
    assert!(updated.blocks.iter().all(|b| b["type"] != "actions"));
    // A second press (an old copy of the message) changes nothing and says who decided.
    let (status, _, _) = slack.press(&message, "Deny", "U0ANA").await;
    assert_eq!(status, 200);
    let said = slack.standin.response("the private note", 0).await;
    assert_eq!(said.1["response_type"], "ephemeral");
    assert!(
        said.1["text"]
            .as_str()
            .unwrap()
            .contains("Allowed by ana from Slack"),
        "{}",
        said.1
    );
    assert_eq!(slack.decision(&id).await["outcome"], "Allow");
    assert!(
        slack.standin.calls_to("views.open").is_empty(),
        "Deny on a settled approval opens no modal"
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_deny_asks_a_reason_in_a_modal() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let id = slack.create(approval("rm -rf ./target", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let (status, _, _) = slack.press(&message, "Deny", "U0ANA").await;
    assert_eq!(status, 200);
    let opened = slack.standin.view_opened("the Deny modal", 0).await;
    assert_eq!(opened.answer, Ok(()));
    assert_eq!(opened.body["view"]["callback_id"], "sayso.deny");
    // Pressing Deny alone records nothing yet.
    assert_eq!(slack.decision(&id).await["status"], "pending");
    let (status, answer) = slack.submit("U0ANA", Some("not on a Friday")).await;
    assert_eq!((status, answer.as_str()), (200, ""));
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], "Deny");
    assert_eq!(d["remark"], "not on a Friday");
    assert_eq!(d["answers"][0]["channel"], "slack");
    let updated = slack
        .standin
        .wait_for("the message settled", |s| {
            s.messages().into_iter().find(|m| m.updates > 0)
        })
        .await;
    let shown = shown_text(&updated);
    assert!(
        shown.contains("Denied by ana from Slack") && shown.contains("not on a Friday"),
        "{shown}"
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_choose_and_text_through_a_modal() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    let choose = slack
        .create(json!({"question": "Which colour?", "kind": "choose",
                       "options": ["Red", "Blue", "Green"], "recommended": 1, "allow_other": false, "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    assert_eq!(button(&message, "★")["text"]["text"], "★ Blue");
    slack.press(&message, "Green", "U0ANA").await;
    let d = slack.wait_status(&choose, "answered").await;
    assert_eq!(d["outcome"], "Green");

    // A choice that takes an answer of one's own: "Other…" opens a dialog for it.
    let other = slack
        .create(json!({"question": "Which colour?", "kind": "choose",
                       "options": ["Red", "Blue"], "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 1).await;
    assert!(
        !shown_text(&message).contains("reply to this message"),
        "{}",
        shown_text(&message)
    );
    slack.press(&message, "Other", "U0ANA").await;
    slack.standin.view_opened("the own-answer modal", 0).await;
    let (status, answer) = slack.submit("U0ANA", Some("Purple")).await;
    assert_eq!((status, answer.as_str()), (200, ""));
    assert_eq!(
        slack.wait_status(&other, "answered").await["outcome"],
        "Purple"
    );

    let text = slack
        .create(json!({"question": "Name the release?", "kind": "text", "placeholder": "e.g. Aurora", "approvers": ["ana"]}))
        .await;
    let message = slack.standin.message_to("U0ANA", 2).await;
    slack.press(&message, "Answer", "U0ANA").await;
    let opened = slack.standin.view_opened("the answer modal", 1).await;
    assert_eq!(opened.body["view"]["callback_id"], "sayso.text");
    // An empty answer is refused under the field; the modal stays open.
    let (status, answer) = slack.submit("U0ANA", Some("  ")).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["response_action"], "errors");
    assert!(
        answer["errors"]["answer"]
            .as_str()
            .unwrap()
            .contains("empty"),
        "{answer}"
    );
    let (status, answer) = slack.submit("U0ANA", Some("Aurora <!here>")).await;
    assert_eq!((status, answer.as_str()), (200, ""));
    let d = slack.wait_status(&text, "answered").await;
    assert_eq!(d["outcome"], "Aurora <!here>");
    let updated = slack
        .standin
        .updated("the text message settled", &message.ts)
        .await;
    // The answer is shown escaped: no broadcast in the settled line.
    assert!(
        shown_text(&updated).contains("&lt;!here&gt;"),
        "{}",
        shown_text(&updated)
    );
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_quorum_of_two_across_slack_and_the_feed_and_a_veto() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    let _ana = slack.person("ana", Some("U0ANA")).await;
    let bo = slack.person("bo", Some("U0BO")).await;
    let id = slack
        .create(json!({"question": "Ship it?", "kind": "bool", "approvers": ["ana", "bo"], "required": 2}))
        .await;
    let to_ana = slack.standin.message_to("U0ANA", 0).await;
    let to_bo = slack.standin.message_to("U0BO", 0).await;
    slack.press(&to_ana, "Yes", "U0ANA").await;
    // Counted, not resolved: both messages show the tally, buttons kept; ana is told.
    all_showing(
        &slack.standin,
        "both messages with the tally",
        &[&to_ana.ts, &to_bo.ts],
        "1 of 2 said yes: ana",
    )
    .await;
    let bo_now = slack
        .standin
        .messages()
        .into_iter()
        .find(|m| m.ts == to_bo.ts)
        .unwrap();
    assert!(bo_now.blocks.iter().any(|b| b["type"] == "actions"));
    let note = slack.standin.response("ana's note", 0).await;
    assert!(
        note.1["text"].as_str().unwrap().contains("1 of 2"),
        "{}",
        note.1
    );
    assert_eq!(slack.decision(&id).await["status"], "pending");
    // bo answers from the feed: resolved, and both Slack messages say so.
    let link = feed_link(&slack.srv, &id, bo.id).await;
    let (status, body) =
        common::server::send(slack.srv.client.post(link).json(&json!({"value": "yes"}))).await;
    assert_eq!(status, 200, "{body}");
    let d = slack.wait_status(&id, "answered").await;
    assert_eq!(d["outcome"], true);
    all_showing(
        &slack.standin,
        "both messages settled",
        &[&to_ana.ts, &to_bo.ts],
        "by bo from the feed",
    )
    .await;

    // A veto: a No from one of two resolves at once.
    let veto = slack
        .create(json!({"question": "Drop the table?", "kind": "bool", "approvers": ["ana", "bo"], "required": 2}))
        .await;
    let to_bo = slack.standin.message_to("U0BO", 1).await;
    slack.press(&to_bo, "No", "U0BO").await;
    let d = slack.wait_status(&veto, "answered").await;
    assert_eq!(d["outcome"], false);
    assert_eq!(d["answers"][0]["person"], "bo");
    let to_ana = slack.standin.message_to("U0ANA", 1).await;
    showing(
        &slack.standin,
        "ana's message settled by bo's No",
        &to_ana.ts,
        "by bo from Slack",
    )
    .await;
    slack.assert_well_formed();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_forged_replayed_and_strangers_presses_change_nothing() {
    let Some(slack) = Slack::start(false).await else {
        return;
    };
    slack.person("ana", Some("U0ANA")).await;
    slack.person("cy", Some("U0CY")).await;
    let id = slack.create(approval("make deploy", &["ana"])).await;
    let message = slack.standin.message_to("U0ANA", 0).await;
    let payload = block_actions(&slack.standin, &message, button(&message, "Allow"), "U0ANA");
    let body = form(&payload);
    let ts = now().to_string();
    // Signed with another secret, unsigned, signed for another body, stale.
    let forged = sdk_sign(slack.python, "not-the-secret", &ts, &body);
    let (status, why) = slack.post_raw(&body, &ts, &forged).await;
    assert_eq!(status, 401);
    assert!(why.contains("does not match"), "{why}");
    let (status, why) = slack.post_raw(&body, &ts, "").await;
    assert_eq!(status, 401, "{why}");
    let other = sdk_sign(slack.python, SIGNING_SECRET, &ts, "payload=%7B%7D");
    assert_eq!(slack.post_raw(&body, &ts, &other).await.0, 401);
    let old = (now() - 600).to_string();
    let stale = sdk_sign(slack.python, SIGNING_SECRET, &old, &body);
    let (status, why) = slack.post_raw(&body, &old, &stale).await;
    assert_eq!(status, 401);
    assert!(why.contains("from now"), "{why}");
    assert_eq!(slack.decision(&id).await["status"], "pending");

    // Someone not asked, pressing (a real, signed press): told privately, nothing recorded.
    let (status, _, _) = slack.press(&message, "Allow", "U0CY").await;
    assert_eq!(status, 200);
    let note = slack.standin.response("cy's note", 0).await;
    assert_eq!(note.1["response_type"], "ephemeral");
    assert!(
        note.1["text"].as_str().unwrap().contains("not yours"),
        "{}",
        note.1
    );
    let d = slack.decision(&id).await;
    assert_eq!(d["status"], "pending");
    assert_eq!(d["answers"], json!([]));
    // Their Deny opens no modal either: they are told the same, privately.
    slack.press(&message, "Deny", "U0CY").await;
    slack
        .standin
        .wait_for("cy's second note", |s| {
            (s.responses().len() == 2).then_some(())
        })
        .await;
    assert!(
        slack.standin.responses()[1].1["text"]
            .as_str()
            .unwrap()
            .contains("not yours")
    );
    assert!(slack.standin.calls_to("views.open").is_empty());

    // ana's real press counts once; the same request again is refused as a replay.
    let (status, _, (body, ts, signature)) = slack.press(&message, "Deny", "U0ANA").await;
    assert_eq!(status, 200);
    let modal = slack.standin.view_opened("the Deny modal", 0).await;
    assert_eq!(modal.answer, Ok(()));
    let (status, why) = slack.post_raw(&body, &ts, &signature).await;
    assert_eq!(status, 401);
    assert!(why.contains("replay"), "{why}");
    // The same request with its signature's hex in upper case still verifies, and is still
    // the same request.
    let upper = format!("v0={}", signature["v0=".len()..].to_uppercase());
    assert_ne!(upper, signature);
    let (status, why) = slack.post_raw(&body, &ts, &upper).await;
    assert_eq!(status, 401, "{upper}: {why}");
    assert!(why.contains("replay"), "{upper}: {why}");
    assert_eq!(
        slack.standin.calls_to("views.open").len(),
        1,
        "the replays opened nothing"
    );
    // A press naming this decision from a message that is not its own is not taken.
    let mut elsewhere = block_actions(&slack.standin, &message, button(&message, "Allow"), "U0ANA");
    elsewhere["container"]["message_ts"] = json!("1712000000.424242");
    elsewhere["channel"]["id"] = json!("C0PUBLIC");
    elsewhere["container"]["channel_id"] = json!("C0PUBLIC");
    assert_eq!(slack.send(&elsewhere).await.0, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(slack.decision(&id).await["status"], "pending");
    slack.assert_well_formed();
}
