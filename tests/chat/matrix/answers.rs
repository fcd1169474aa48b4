//! Answering from Matrix: reactions and replies, a rule of two or three across Matrix and the
//! feed, a veto, a form's link, and answers that must count for nothing.

use super::fixture::*;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_allowed_by_reaction_is_edited_in_place() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(approval("cargo publish --dry-run", &["ana"]))
        .await;
    let (room, ask, content) = first_ask(&mut ana, "cargo publish").await;

    // What runs is set apart exactly; what the asker wrote is text, not markup.
    let html = content["formatted_body"].as_str().unwrap();
    assert_eq!(content["format"], "org.matrix.custom.html");
    assert!(
        html.contains("<pre><code>cargo publish --dry-run</code></pre>"),
        "{html}"
    );
    assert!(
        html.contains("&lt;b&gt;bold&lt;/b&gt; &lt;a href=&quot;https://evil.example&quot;&gt;"),
        "{html}"
    );
    assert_eq!(
        html.matches("<a ").count(),
        1,
        "only the page's link: {html}"
    );
    assert_eq!(content["m.mentions"], json!({}), "the ask mentions no one");
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("React 👍 Allow · 👎 Deny"), "{body}");
    let d = f.srv.get(&id).await;
    let (decision, ana_id) = f.decision_and_person(&id, "ana").await;
    let link = f
        .srv
        .svc
        .person_url(&decision, PersonChannel::Matrix, ana_id);
    assert!(body.contains(&link), "the person's own Matrix link: {body}");
    assert_eq!(d["status"], "pending");

    // The answers are placed under the ask, one tap away.
    assert_eq!(ana.reactions(&room, &ask, BOT, 2).await, vec!["👍", "👎"]);
    ana.react(&room, &ask, "👍").await;
    let d = f.settled(&id).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], "Allow", "{d}");
    assert_eq!(d["answered_by"]["channel"], "matrix", "{d}");
    assert_eq!(d["answers"][0]["person"], "ana", "{d}");

    let (sender, new) = ana.edit(&room, &ask, "Allowed by ana from Matrix").await;
    assert_eq!(sender, BOT);
    assert!(!new["body"].as_str().unwrap().contains("React"), "{new}");
    assert!(
        new["formatted_body"]
            .as_str()
            .unwrap()
            .contains("<pre><code>cargo publish --dry-run</code></pre>")
    );

    // A second answer after it settled changes nothing and is told who decided.
    ana.react(&room, &ask, "👎").await;
    ana.message(&room, BOT, "Already settled: Allowed by ana")
        .await;
    assert_eq!(f.srv.get(&id).await["outcome"], "Allow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_by_reply_keeps_its_reason() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f.create(approval("git push --force", &["ana"])).await;
    let (room, ask, _) = first_ask(&mut ana, "git push --force").await;
    ana.reply(&room, &ask, "deny: not on Friday").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Deny", "{d}");
    assert_eq!(d["remark"], "not on Friday", "{d}");
    assert_eq!(d["answered_by"]["channel"], "matrix", "{d}");
    ana.edit(&room, &ask, "Denied by ana from Matrix").await;

    // A reply that answers nothing is refused with why; a plain message gets a hint.
    let id2 = f.create(approval("make deploy", &["ana"])).await;
    let (ask2, _) = ana.message(&room, BOT, "make deploy").await;
    ana.reply(&room, &ask2, "perhaps later").await;
    ana.message(&room, BOT, "allow").await;
    ana.run(json!({"do": "send", "room": room,
                   "content": {"msgtype": "m.text", "body": "allow"}}))
        .await;
    ana.message(&room, BOT, "react to it or reply to it").await;
    assert_eq!(f.after_a_while(&id2).await["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_by_keycap_reaction_and_by_name() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let body = |q: &str| {
        json!({"question": q, "kind": "choose", "options": ["Red", "Blue", "Green"],
               "recommended": 1, "allow_other": false, "approvers": ["ana"]})
    };
    let id = f.create(body("Which colour <b>now</b>?")).await;
    let (room, ask, content) = first_ask(&mut ana, "Which colour").await;
    let html = content["formatted_body"].as_str().unwrap();
    assert!(
        html.contains("Which colour &lt;b&gt;now&lt;/b&gt;?"),
        "{html}"
    );
    assert!(
        content["body"]
            .as_str()
            .unwrap()
            .contains("1️⃣ Red · 2️⃣ Blue (recommended) · 3️⃣ Green"),
        "{content}"
    );
    assert_eq!(
        ana.reactions(&room, &ask, BOT, 3).await,
        vec!["1️⃣", "2️⃣", "3️⃣"]
    );
    // A keycap without its variation selector, as some clients send it.
    ana.react(&room, &ask, "2\u{20e3}").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Blue", "{d}");
    ana.edit(&room, &ask, "Answered “Blue” by ana from Matrix")
        .await;

    let id = f.create(body("And the roof?")).await;
    let (ask, _) = ana.message(&room, BOT, "And the roof?").await;
    ana.reply(&room, &ask, "green").await;
    assert_eq!(f.settled(&id).await["outcome"], "Green");

    // Where "Other" is allowed, a reply of one's own answers too.
    let id = f
        .create(json!({"question": "And the door?", "kind": "choose",
                       "options": ["Red", "Blue"], "approvers": ["ana"]}))
        .await;
    let (ask, content) = ana.message(&room, BOT, "And the door?").await;
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("1️⃣ Red · 2️⃣ Blue"), "{body}");
    assert!(body.contains("your own answer"), "{body}");
    ana.reply(&room, &ask, "Purple").await;
    let d = f.settled(&id).await;
    assert_eq!(
        (&d["outcome"], &d["custom"]),
        (&json!("Purple"), &json!(true)),
        "{d}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_answer_by_reply() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(json!({"question": "Name the release", "kind": "text",
                       "placeholder": "a word", "approvers": ["ana"]}))
        .await;
    let (room, ask, content) = first_ask(&mut ana, "Name the release").await;
    assert!(
        content["body"]
            .as_str()
            .unwrap()
            .contains("Reply to this message with your answer (a word)."),
        "{content}"
    );
    // Sent right after the ask if at all: a bool's would be there by the notice.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(ana.reactions(&room, &ask, BOT, 0).await.is_empty());
    // A reply as older clients send it, quoting the ask first.
    ana.run(json!({"do": "send", "room": room, "content": {
        "msgtype": "m.text",
        "body": "> <@saysobot:sayso.test> Name the release\n\nLemur & <Lynx>",
        "m.relates_to": {"m.in_reply_to": {"event_id": ask}},
    }}))
    .await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Lemur & <Lynx>", "{d}");
    let (_, new) = ana.edit(&room, &ask, "Answered").await;
    assert!(
        new["formatted_body"]
            .as_str()
            .unwrap()
            .contains("Lemur &amp; &lt;Lynx&gt;"),
        "{new}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_of_two_counts_a_matrix_answer_and_a_feed_answer() {
    let Some(f) = Fixture::start(&["ana", "ben"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(json!({"question": "Ship it?", "kind": "bool",
                       "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Ship it?").await;
    f.ask_sent(&id).await;
    ana.react(&room, &ask, "👍").await;
    ana.message(&room, BOT, "Counted. 1 of 2 said yes: ana")
        .await;
    ana.edit(&room, &ask, "1 of 2 said yes: ana").await;
    assert_eq!(f.srv.get(&id).await["status"], "pending");

    // ben answers from his feed; ana's message settles to say so.
    answer_on_feed(&f, &id, "ben", json!("yes")).await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], true, "{d}");
    let (_, new) = ana.edit(&room, &ask, "by ben from the feed").await;
    assert!(!new["body"].as_str().unwrap().contains("React"), "{new}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_veto_from_matrix_settles_a_rule_of_two_at_once() {
    let Some(f) = Fixture::start(&["ana", "ben"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut ben = f.login("ben").await;
    let id = f.create(approval("terraform apply", &["ana", "ben"])).await;
    f.srv.get(&id).await;
    let (a_room, a_ask, _) = first_ask(&mut ana, "terraform apply").await;
    let (b_room, b_ask, _) = first_ask(&mut ben, "terraform apply").await;
    assert_ne!(a_room, b_room, "each person has a room of their own");
    ben.reply(&b_room, &b_ask, "deny: not without a plan").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], "Deny", "{d}");
    // Both messages settle: ben's where he answered, ana's too.
    ben.edit(&b_room, &b_ask, "Denied by ben from Matrix").await;
    ana.edit(&a_room, &a_ask, "Denied by ben from Matrix").await;
    ana.react(&a_room, &a_ask, "👍").await;
    ana.message(&a_room, BOT, "Already settled: Denied by ben")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn someone_not_asked_is_told_so_and_nothing_is_recorded() {
    // eve is a person of the inbox with her own Matrix id, not asked; mallory is no one.
    let Some(f) = Fixture::start(&["ana", "eve"], &["mallory"]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut eve = f.login("eve").await;
    let mut mallory = f.login("mallory").await;
    let id = f
        .create(json!({"question": "Ship it?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Ship it?").await;

    // ana brings others into her room; their reactions and replies count for nothing.
    for who in [&eve.user_id, &mallory.user_id] {
        ana.run(json!({"do": "invite", "room": room, "user": who}))
            .await;
    }
    let (joined, _) = mallory.join_from(&ana.user_id).await;
    assert_eq!(joined, room);
    let (joined, _) = eve.join_from(&ana.user_id).await;
    assert_eq!(joined, room);
    mallory.react(&room, &ask, "👍").await;
    eve.reply(&room, &ask, "yes").await;
    let (_, notice) = ana.message(&room, BOT, "not yours to answer").await;
    assert_eq!(notice["msgtype"], "m.notice");
    assert_eq!(f.after_a_while(&id).await["status"], "pending");

    // eve's own room (made by an ask of her own): a reply there naming ana's ask is not an
    // answer to it.
    let mine = f
        .create(json!({"question": "Eve's own?", "kind": "bool", "approvers": ["eve"]}))
        .await;
    let (eve_room, _) = eve.join_from(BOT).await;
    eve.message(&eve_room, BOT, "Eve's own?").await;
    eve.reply(&eve_room, &ask, "yes").await;
    eve.message(&eve_room, BOT, "not one of sayso's questions here")
        .await;
    assert_eq!(f.after_a_while(&id).await["status"], "pending");
    assert_eq!(f.srv.get(&mine).await["status"], "pending");

    ana.react(&room, &ask, "👍").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], true);
    assert_eq!(d["answers"].as_array().unwrap().len(), 1, "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_sender_counts_for_nothing() {
    // mallory takes ana's display name and writes ana's id into the event: the homeserver
    // sets `sender` from mallory's token, and that is what the bot reads.
    let Some(f) = Fixture::start(&["ana"], &["mallory"]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut mallory = f.login("mallory").await;
    let id = f
        .create(json!({"question": "Rotate the keys?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Rotate the keys?").await;
    ana.run(json!({"do": "invite", "room": room, "user": mallory.user_id}))
        .await;
    mallory.join_from(&ana.user_id).await;
    mallory
        .run(json!({"do": "name", "displayname": "ana"}))
        .await;
    let forged = mallory
        .run(json!({"do": "send", "room": room, "content": {
            "msgtype": "m.text", "body": "yes",
            "sender": ana.user_id, "user_id": ana.user_id,
            "m.relates_to": {"m.in_reply_to": {"event_id": ask}},
        }}))
        .await;
    let forged = forged["event_id"].as_str().unwrap();
    mallory
        .run(
            json!({"do": "send", "room": room, "type": "m.reaction", "content": {
                "sender": ana.user_id,
                "m.relates_to": {"rel_type": "m.annotation", "event_id": ask, "key": "👍"},
            }}),
        )
        .await;
    ana.message(&room, BOT, "not yours to answer").await;
    assert_eq!(f.after_a_while(&id).await["status"], "pending");
    // What everyone in the room sees: the homeserver's sender, mallory.
    let seen = ana
        .run(
            json!({"do": "message", "room": room, "sender": mallory.user_id,
                    "contains": "yes"}),
        )
        .await;
    assert_eq!(seen["event_id"], forged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_answered_on_the_page_its_link_given() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(
            json!({"question": "New laptop", "kind": "form", "approvers": ["ana"],
                       "schema": {"type": "object", "required": ["os"], "properties": {
                           "os": {"type": "string", "enum": ["linux", "mac"]}}}}),
        )
        .await;
    let (room, ask, content) = first_ask(&mut ana, "New laptop").await;
    let body = content["body"].as_str().unwrap();
    assert!(body.contains("Answer on the page."), "{body}");
    assert!(!body.contains("React"), "{body}");
    ana.reply(&room, &ask, "linux").await;
    let (_, notice) = ana
        .message(&room, BOT, "Answer this one on the page.")
        .await;
    let html = notice["formatted_body"].as_str().unwrap();
    assert!(
        html.contains("<a href=\"http://"),
        "the page's link: {html}"
    );
    assert_eq!(f.after_a_while(&id).await["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_of_three_shows_each_count_in_place() {
    let Some(f) = Fixture::start(&["ana", "ben", "cy"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(json!({"question": "All three?", "kind": "bool",
                       "approvers": ["ana", "ben", "cy"], "required": 3}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "All three?").await;
    // A tally goes to the asks already recorded as sent: ana's is, once its courier is done.
    f.ask_sent(&id).await;
    answer_on_feed(&f, &id, "ben", json!("yes")).await;
    ana.edit(&room, &ask, "1 of 3 said yes: ben").await;
    answer_on_feed(&f, &id, "cy", json!("yes")).await;
    ana.edit(&room, &ask, "2 of 3 said yes: ben, cy").await;
    ana.react(&room, &ask, "👍").await;
    assert_eq!(f.settled(&id).await["outcome"], true);
    ana.edit(&room, &ask, "by ana from Matrix").await;
}
