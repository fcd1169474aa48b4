//! Passkeys are worth what a person's feed link alone cannot do: once a person has a
//! passkey, a device bound by the feed link adds no other without it; a passkey allows only
//! its own person's approvals, and every Allow vote of a rule of two; the posts a device
//! cookie alone authenticates come only from sayso's own page, as JSON; the feed link
//! leaves the address bar at once; and each passkey added is announced to its person.

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use sayso::domain::PersonChannel;
use sayso::domain::people::Person;

use crate::authenticator::{
    Authenticator, add_passkey, allow_with, bind_device, creation_options, post_passkey,
    step_up_challenge,
};
use crate::common::approval::passkey_guarded;
use crate::common::db::fresh_sqlite_url;
use crate::common::receiver::{Receiver, Reply};
use crate::common::server::{TestServer, fresh_server, s, send};
use crate::support::no_redirects;

fn approval(command: &str, people: Option<(&[&str], u32)>) -> Value {
    let mut body = passkey_guarded(command);
    if let Some((approvers, required)) = people {
        body["approvers"] = json!(approvers);
        body["required"] = json!(required);
    }
    body
}

/// The feed approval link of `person` for the decision of the handle `h`.
async fn link_of(srv: &TestServer, h: &Value, person: &Person) -> String {
    let id: Uuid = s(h, "decision_id").parse().unwrap();
    let d = srv.svc.store().decision(None, id).await.unwrap().unwrap();
    srv.svc.person_url(&d, PersonChannel::Feed, person.id)
}

async fn own_person(srv: &TestServer) -> Person {
    srv.owner().await
}

fn feed_token(srv: &TestServer, p: &Person) -> String {
    srv.svc.tokens().feed_token(p.id)
}

async fn passkey_count(srv: &TestServer, p: &Person) -> usize {
    srv.svc.store().passkeys(p.id).await.unwrap().len()
}

fn message(body: &Value) -> &str {
    body["error"]["details"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail in {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_link_alone_adds_no_passkey_once_the_person_has_one() {
    let (_db, srv) = fresh_server().await;
    let ana = srv.add_person("ana").await;
    let token = feed_token(&srv, &ana);

    // Ana's first passkey takes only her bound device.
    let phone = bind_device(&srv, &token).await;
    let mut hers = Authenticator::new(&srv);
    let (st, body) = add_passkey(&srv, &phone, &hers, None).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");

    // Someone holding her feed link binds a device of their own and adds a passkey of theirs.
    let thief = bind_device(&srv, &token).await;
    let mut theirs = Authenticator::new(&srv);
    let options = creation_options(&srv, &thief).await;
    assert!(options["existing"]["challenge"].is_string(), "{options}");
    let bare = theirs.register(options["challenge"].as_str().unwrap());
    let (st, body) = post_passkey(&srv, &thief, &bare).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        message(&body).contains("needs one of yours first"),
        "{body}"
    );
    // Consenting with their own passkey is no better.
    let mut with_own = bare.clone();
    with_own["existing"] = theirs.sign(options["existing"]["challenge"].as_str().unwrap());
    let (st, body) = post_passkey(&srv, &thief, &with_own).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(message(&body).contains("not one of yours"), "{body}");
    assert_eq!(passkey_count(&srv, &ana).await, 1);

    // Ana's consent counts for the one registration it was asked with: one she gave for
    // her own new passkey does not carry over to the thief's.
    let mine = creation_options(&srv, &phone).await;
    let consent = hers.sign(mine["existing"]["challenge"].as_str().unwrap());
    let mut stolen = theirs.register(
        creation_options(&srv, &thief).await["challenge"]
            .as_str()
            .unwrap(),
    );
    stolen["existing"] = consent.clone();
    let (st, body) = post_passkey(&srv, &thief, &stolen).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(message(&body).contains("challenge"), "{body}");
    assert_eq!(passkey_count(&srv, &ana).await, 1);

    // With her passkey, Ana adds another.
    let second = Authenticator::new(&srv);
    let (st, body) = add_passkey(&srv, &phone, &second, Some(&mut hers)).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    assert_eq!(passkey_count(&srv, &ana).await, 2);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_allows_only_its_own_persons_approvals() {
    let (_db, srv) = fresh_server().await;
    let owner = own_person(&srv).await;
    let ana = srv.add_person("ana").await;
    let phone = bind_device(&srv, &feed_token(&srv, &ana)).await;
    let mut anas = Authenticator::new(&srv);
    let (st, body) = add_passkey(&srv, &phone, &anas, None).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");

    // An approval everyone is asked; the inbox's own person has no passkey.
    let h = srv.create(approval("git push --force", None)).await;
    let owners_link = link_of(&srv, &h, &owner).await;
    let (st, body) = step_up_challenge(&srv, &owners_link).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(message(&body).contains("you have none yet"), "{body}");

    // Once the owner has a passkey too, Ana's, used through the owner's link, allows
    // nothing (the challenge is the decision's, taken from Ana's own link).
    let owners_phone = bind_device(&srv, &feed_token(&srv, &owner)).await;
    let (st, body) = add_passkey(&srv, &owners_phone, &Authenticator::new(&srv), None).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    let anas_link = link_of(&srv, &h, &ana).await;
    let (st, options) = step_up_challenge(&srv, &anas_link).await;
    assert_eq!(st, StatusCode::OK, "{options}");
    let assertion = anas.sign(options["challenge"].as_str().unwrap());
    let (st, body) = allow_with(&srv, &owners_link, Some(assertion)).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(message(&body).contains("not one of yours"), "{body}");
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "pending");

    // Through her own link it allows.
    let (_, options) = step_up_challenge(&srv, &anas_link).await;
    let assertion = anas.sign(options["challenge"].as_str().unwrap());
    let (st, body) = allow_with(&srv, &anas_link, Some(assertion)).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(body["outcome"], "Allow");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_allow_vote_of_a_rule_of_two_needs_that_persons_passkey() {
    let (_db, srv) = fresh_server().await;
    let mut keys = Vec::new();
    let mut people = Vec::new();
    for name in ["ana", "ben"] {
        let p = srv.add_person(name).await;
        let device = bind_device(&srv, &feed_token(&srv, &p)).await;
        let key = Authenticator::new(&srv);
        let (st, body) = add_passkey(&srv, &device, &key, None).await;
        assert_eq!(st, StatusCode::CREATED, "{body}");
        keys.push(key);
        people.push(p);
    }
    let h = srv
        .create(approval("terraform destroy", Some((&["ana", "ben"], 2))))
        .await;
    let id = s(&h, "decision_id").to_string();
    let ana_link = link_of(&srv, &h, &people[0]).await;
    let ben_link = link_of(&srv, &h, &people[1]).await;

    // Ana's Allow does not resolve it, and still needs her passkey.
    let (st, body) = allow_with(&srv, &ana_link, None).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(message(&body).contains("needs your passkey"), "{body}");
    let d = srv.get(&id).await;
    assert_eq!(d["answers"], json!([]), "no vote counted: {d}");

    let (_, options) = step_up_challenge(&srv, &ana_link).await;
    let a = keys[0].sign(options["challenge"].as_str().unwrap());
    let (st, body) = allow_with(&srv, &ana_link, Some(a)).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "pending", "one of two: {body}");

    // Ben's, which would resolve it, needs his own too: Ana's passkey is not his.
    let (st, body) = allow_with(&srv, &ben_link, None).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, options) = step_up_challenge(&srv, &ben_link).await;
    let with_anas = keys[0].sign(options["challenge"].as_str().unwrap());
    let (st, body) = allow_with(&srv, &ben_link, Some(with_anas)).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, options) = step_up_challenge(&srv, &ben_link).await;
    let b = keys[1].sign(options["challenge"].as_str().unwrap());
    let (st, body) = allow_with(&srv, &ben_link, Some(b)).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(
        (&body["status"], &body["outcome"]),
        (&json!("answered"), &json!("Allow"))
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_a_device_cookie_alone_authenticates_come_only_from_the_page_as_json() {
    let (_db, srv) = fresh_server().await;
    let owner = own_person(&srv).await;
    let cookie = bind_device(&srv, &feed_token(&srv, &owner)).await;
    // A push subscription an attacker's page would plant: its notifications, approval
    // links and all, would go to the attacker's endpoint.
    let subscription = json!({
        "endpoint": "https://push.attacker.example/sub/1",
        "keys": {
            "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
            "auth": "tBHItJI5svbpez7KI4CCXg",
        },
    });
    let key = Authenticator::new(&srv);
    let options = creation_options(&srv, &cookie).await;
    let passkey = key.register(options["challenge"].as_str().unwrap());
    let origin = url::Url::parse(&srv.base)
        .unwrap()
        .origin()
        .ascii_serialization();
    for (path, body) in [
        ("/inbox/push", &subscription),
        ("/inbox/passkeys", &passkey),
    ] {
        let post = |headers: &[(&str, &str)], content_type: &str| {
            let mut req = srv
                .client
                .post(srv.url(path))
                .header("cookie", &cookie)
                .header("content-type", content_type)
                .body(body.to_string());
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            req
        };
        // A form in a sandboxed frame or a data: page: `Origin: null`, no Sec-Fetch-Site.
        let (st, got) = send(post(&[("origin", "null")], "text/plain")).await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{path}: {got}");
        assert_eq!(got["error"]["code"], "cross_site", "{path}: {got}");
        let (st, got) = send(post(&[("origin", "null")], "application/json")).await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{path}: {got}");
        let (st, got) = send(post(
            &[("sec-fetch-site", "cross-site")],
            "application/json",
        ))
        .await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{path}: {got}");
        // The page itself, but not as JSON.
        let (st, got) = send(post(&[("sec-fetch-site", "same-origin")], "text/plain")).await;
        assert_eq!(st, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{path}: {got}");
        let (st, got) = send(post(&[("origin", &origin)], "text/plain")).await;
        assert_eq!(st, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{path}: {got}");
    }
    assert!(
        srv.svc
            .store()
            .push_subscriptions(&owner)
            .await
            .unwrap()
            .is_empty(),
        "no subscription was stored"
    );
    assert_eq!(passkey_count(&srv, &owner).await, 0);
    // The page's own posts are taken.
    let (st, got) = post_passkey(&srv, &cookie, &passkey).await;
    assert_eq!(st, StatusCode::CREATED, "{got}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_link_binds_the_device_and_leaves_the_address_bar() {
    let (_db, srv) = fresh_server().await;
    let owner = own_person(&srv).await;
    let token = feed_token(&srv, &owner);
    let resp = no_redirects()
        .get(srv.url(&format!("/inbox/{token}?project=ops")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/inbox?project=ops");
    let set = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    // Over plain http the cookie keeps its plain name (a __Host- cookie needs https).
    assert!(set.starts_with("sayso_device="), "{set}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set.contains(attribute), "{attribute}: {set}");
    }
    let body = resp.text().await.unwrap();
    assert!(!body.contains(&token), "the token is nowhere in the answer");

    // The cookie opens the feed, under either name it may carry.
    let value = set
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_string();
    for name in ["sayso_device", "__Host-sayso_device"] {
        let resp = srv
            .client
            .get(srv.url("/inbox"))
            .header("cookie", format!("{name}={value}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{name}");
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_added_is_announced_to_its_person() {
    let db = fresh_sqlite_url();
    let ntfy = Receiver::start(Reply::Json(|_| json!({"id": "x"}))).await;
    let srv = TestServer::start_notifying(&db.url, None).await;
    let ana = srv.add_person("ana").await;
    let ana = sayso::domain::people::Person {
        ntfy_url: Some(format!("{}/ana-topic", ntfy.base)),
        ..ana
    };
    srv.svc.store().update_person(&ana).await.unwrap();
    let device = bind_device(&srv, &feed_token(&srv, &ana)).await;
    let key = Authenticator::new(&srv);
    let options = creation_options(&srv, &device).await;
    let body = key.register(options["challenge"].as_str().unwrap());
    let (st, added) = send(
        srv.client
            .post(srv.url("/inbox/passkeys"))
            .header("cookie", &device)
            .header("sec-fetch-site", "same-origin")
            .header("user-agent", "Firefox on the thief's laptop\tIgnore this")
            .json(&body),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED, "{added}");
    let mut ntfy = ntfy;
    let published = ntfy.next().await.json();
    assert_eq!(published["topic"], "ana-topic", "{published}");
    let text = published["message"].as_str().unwrap();
    let prefix: String = s(&added, "id").chars().take(12).collect();
    assert!(
        text.starts_with(
            "A passkey was added to your sayso on \"Firefox on the thief's laptopIgnore this\" at "
        ),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "sayso person passkeys ana --inbox default --remove {prefix}"
        )),
        "{text}"
    );
    srv.stop().await;
}
