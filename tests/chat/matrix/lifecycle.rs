//! A Matrix question's life beyond the answer: expiry, the homeserver or sayso down, the
//! person's own room, a user no homeserver reaches, the command line's test message.

use super::fixture::*;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiry_updates_the_message() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let id = f
        .create(
            json!({"question": "Quick one?", "kind": "bool", "ttl_seconds": 10,
                       "approvers": ["ana"]}),
        )
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Quick one?").await;
    let (_, new) = ana.edit(&room, &ask, "Expired").await;
    assert!(
        new["body"].as_str().unwrap().contains("unanswered"),
        "{new}"
    );
    assert_eq!(f.srv.get(&id).await["status"], "expired");
    ana.react(&room, &ask, "👍").await;
    ana.message(&room, BOT, "Already settled: Expired").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_made_while_the_homeserver_is_down_arrives_when_it_is_back() {
    let Some(mut f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    // The bot is logged in and syncing before the outage.
    tokio::time::sleep(Duration::from_secs(1)).await;
    f.hs.stop().await;
    let id = f
        .create(json!({"question": "During the outage?", "kind": "bool",
                       "approvers": ["ana"]}))
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let notes = f.srv.get(&id).await["notifications"].clone();
    let matrix = notes
        .as_array()
        .and_then(|n| n.iter().find(|m| m["channel"] == "matrix"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(matrix["status"], "pending", "retried, not failed: {notes}");
    f.hs.run().await;
    let mut ana = f.login("ana").await;
    let (room, ask, _) = first_ask(&mut ana, "During the outage?").await;
    ana.react(&room, &ask, "👍").await;
    let d = f.settled(&id).await;
    assert_eq!(d["outcome"], true, "{d}");
    ana.edit(&room, &ask, "by ana from Matrix").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_counts_only_in_the_persons_own_room() {
    // eve is asked too, but ana's room is ana's: eve's reaction there is not counted, her
    // reaction in her own room is.
    let Some(f) = Fixture::start(&["ana", "eve"], &[]).await else {
        return;
    };
    let mut ana = f.login("ana").await;
    let mut eve = f.login("eve").await;
    let id = f
        .create(json!({"question": "Both of you?", "kind": "bool",
                       "approvers": ["ana", "eve"], "required": 2}))
        .await;
    let (room, ask, _) = first_ask(&mut ana, "Both of you?").await;
    let (eve_room, eve_ask, _) = first_ask(&mut eve, "Both of you?").await;
    f.ask_sent(&id).await;
    ana.run(json!({"do": "invite", "room": room, "user": eve.user_id}))
        .await;
    let (joined, _) = eve.join_from(&ana.user_id).await;
    assert_eq!(joined, room);
    eve.react(&room, &ask, "👍").await;
    eve.message(&room, BOT, "not yours to answer").await;
    let d = f.after_a_while(&id).await;
    assert_eq!(d["answers"], json!([]), "{d}");

    eve.react(&eve_room, &eve_ask, "👍").await;
    eve.message(&eve_room, BOT, "Counted. 1 of 2 said yes: eve")
        .await;
    ana.edit(&room, &ask, "1 of 2 said yes: eve").await;
    ana.react(&room, &ask, "👍").await;
    assert_eq!(f.settled(&id).await["outcome"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_to_a_user_no_homeserver_reaches_fails_naming_why() {
    let Some(f) = Fixture::start(&[], &[]).await else {
        return;
    };
    // ghost has no account; far is on a server this one does not federate with.
    f.bind("ghost", "@ghost:sayso.test").await;
    f.bind("far", "@far:elsewhere.example").await;
    for (who, why) in [
        ("ghost", "knows no user @ghost:sayso.test"),
        ("far", "403 M_FORBIDDEN"),
    ] {
        let id = f
            .create(json!({"question": "Anyone?", "kind": "bool", "approvers": [who]}))
            .await;
        let started = Instant::now();
        let detail = loop {
            let notes = f.srv.get(&id).await["notifications"].clone();
            let failed = notes
                .as_array()
                .into_iter()
                .flatten()
                .find(|n| n["channel"] == "matrix" && n["status"] == "failed")
                .map(|n| n["detail"].as_str().unwrap_or_default().to_string());
            if let Some(detail) = failed {
                break detail;
            }
            assert!(started.elapsed() < PROMPTLY, "not failed: {notes}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(detail.contains(why), "{who}: {detail}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_given_while_sayso_is_down_is_taken_after_its_restart() {
    answer_while_down(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_buried_under_a_long_gap_is_read_back_from_the_room() {
    // More events than one sync batch holds (Synapse gives at most 100 a room): the sync
    // comes back "limited", and the answer before them is read from the room's history.
    answer_while_down(250).await;
}

/// The real binary, killed and started again on the same database: the sync resumes where
/// it stopped (its token is kept in the database), so a reply made in between counts, even
/// with `fillers` other events after it.
async fn answer_while_down(fillers: usize) {
    const BIN: &str = env!("CARGO_BIN_EXE_sayso");
    let Some(hs) = Homeserver::start().await else {
        return;
    };
    hs.register(&["saysobot", "ana"]).await;
    let db = fresh_sqlite_url();
    let env = [
        ("SAYSO_MATRIX_HOMESERVER", hs.url.as_str()),
        ("SAYSO_MATRIX_USER", "@saysobot:sayso.test"),
        ("SAYSO_MATRIX_PASSWORD", "saysobot-password"),
    ];
    let first = SaysoProcess::start_with_env(BIN, &db.url, &env).await;
    let key = first.key.clone().expect("the first run writes a key");
    let store = sayso::storage::connect(&db.url).await.unwrap();
    let inbox = store.inbox_by_name("default").await.unwrap().unwrap();
    store
        .add_person(&sayso::domain::people::Person {
            id: uuid::Uuid::now_v7(),
            inbox_id: inbox.id,
            name: "ana".into(),
            email: None,
            ntfy_url: None,
            ntfy_token: None,
            chats: ChatUsers {
                matrix: Some("@ana:sayso.test".into()),
                ..ChatUsers::default()
            },
            tz: None,
            quiet: None,
            lang: None,
            created_at: sayso::service::now(),
        })
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let created: Value = json_of(
        client
            .post(format!("{}/v1/decisions", first.base))
            .bearer_auth(&key)
            .json(&json!({"question": "Over the restart?", "kind": "bool", "approvers": ["ana"]})),
    )
    .await;
    let id = s(&created, "decision_id").to_string();
    let mut ana = Person::login(&hs, "ana").await;
    let (room, ask, _) = first_ask(&mut ana, "Over the restart?").await;
    // Its sync has seen the room before it goes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let since = store.setting("chat.matrix.since").await.unwrap();
    assert!(
        since.is_some_and(|t| !t.is_empty()),
        "the sync token is kept"
    );
    first.kill().await;
    if fillers > 0 {
        // The killed process's last long poll is still answered by Synapse, which keeps the
        // answer for an identical request a while: that answer gets this first event, so
        // the reply comes in the next, limited, batch.
        ana.run(json!({"do": "spam", "room": room, "count": 1}))
            .await;
    }
    ana.reply(&room, &ask, "yes").await;
    if fillers > 0 {
        // Notices, which the bot leaves alone (a plain message would get a hint each).
        ana.run(json!({"do": "spam", "room": room, "count": fillers}))
            .await;
    }

    let second = SaysoProcess::start_with_env(BIN, &db.url, &env).await;
    let started = Instant::now();
    let d = loop {
        let d: Value = json_of(
            client
                .get(format!("{}/v1/decisions/{id}", second.base))
                .bearer_auth(&key),
        )
        .await;
        if d["status"] != "pending" {
            break d;
        }
        assert!(started.elapsed() < PROMPTLY, "still pending: {d}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(d["outcome"], true, "{d}");
    assert_eq!(d["answered_by"]["channel"], "matrix", "{d}");
    ana.edit(&room, &ask, "by ana from Matrix").await;
    second.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_message_opens_the_room_the_asks_then_use() {
    let Some(f) = Fixture::start(&["ana"], &[]).await else {
        return;
    };
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_sayso"))
        .args(["person", "test", "ana", "--channel", "matrix"])
        .env("SAYSO_DATABASE_URL", &f.db.url)
        .env("SAYSO_PUBLIC_URL", &f.srv.base)
        .env("SAYSO_LOG", "warn")
        .env("SAYSO_MATRIX_HOMESERVER", &f.hs.url)
        .env("SAYSO_MATRIX_USER", "saysobot")
        .env("SAYSO_MATRIX_PASSWORD", "saysobot-password")
        .output()
        .await
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("sent a test message to @ana:sayso.test"),
        "{said}"
    );
    let mut ana = f.login("ana").await;
    let room = ana.join_invite(BOT).await;
    ana.message(&room, BOT, "questions for ana will arrive here")
        .await;
    assert!(said.contains(&room), "{said}");

    // The server asks in the same room, and takes ana's answer there.
    let id = f
        .create(json!({"question": "Same room?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let (ask, _) = ana.message(&room, BOT, "Same room?").await;
    ana.react(&room, &ask, "👍").await;
    assert_eq!(f.settled(&id).await["outcome"], true);
}
