//! Several people: approvers, a required count, a veto, the same person twice, and who may
//! see and answer what; answers racing from many people (and replicas) counted once each.

use reqwest::StatusCode;
use serde_json::{Value, json};

use sayso::domain::people::Person;

use crate::common::people::{add_people, feed_link};
use crate::common::server::{TestServer, s, send};

/// `person`'s own link to the decision `id` (their feed's).
async fn link(srv: &TestServer, id: &str, person: &Person) -> String {
    feed_link(srv, id, person.id).await
}

async fn post(srv: &TestServer, url: &str, body: Value) -> (StatusCode, Value) {
    send(srv.client.post(url).json(&body)).await
}

fn names(d: &Value) -> Vec<String> {
    d["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["person"].as_str().unwrap_or("?").to_string())
        .collect()
}

pub async fn a_decision_needing_two_resolves_when_both_allow(srv: &TestServer) {
    let people = add_people(srv, &["ana", "ben"]).await;
    let h = srv
        .create(json!({"question": "Ship it?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let id = s(&h, "decision_id");
    let (ana, ben) = (&people[0], &people[1]);
    let d = srv.get(id).await;
    assert_eq!(d["progress"], "0 of 2 said yes");
    assert_eq!(d["routing"]["required"], 2);

    let (status, body) = post(srv, &link(srv, id, ana).await, json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "pending");
    let d = srv.get(id).await;
    assert_eq!(d["status"], "pending");
    assert_eq!(names(&d), ["ana"]);
    assert_eq!(d["progress"], "1 of 2 said yes: ana");

    // The same person again counts once, and changes nothing.
    let (status, _) = post(srv, &link(srv, id, ana).await, json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&srv.get(id).await), ["ana"]);

    let (status, body) = post(srv, &link(srv, id, ben).await, json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let d = srv.get(id).await;
    assert_eq!(d["status"], "answered");
    assert_eq!(d["outcome"], true);
    assert_eq!(names(&d), ["ana", "ben"]);
    assert_eq!(d["answers"][1]["channel"], "feed");

    // The audit trail names the person of every answer.
    let events = srv.req(reqwest::Method::GET, &format!("/v1/decisions/{id}/events"));
    let (_, events) = send(events).await;
    let events = events["items"].as_array().unwrap().clone();
    let voted: Vec<&Value> = events.iter().filter(|e| e["kind"] == "voted").collect();
    assert_eq!(voted.len(), 1, "{events:?}");
    assert_eq!(voted[0]["detail"]["person"], "ana");
    let answered: Vec<&Value> = events.iter().filter(|e| e["kind"] == "answered").collect();
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["detail"]["person"], "ben");

    // Once resolved, a late answer is refused as before.
    let (status, _) = post(srv, &link(srv, id, ana).await, json!({"value": "no"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
}

pub async fn any_no_or_decline_resolves_at_once(srv: &TestServer) {
    let people = add_people(srv, &["ana", "ben", "cy"]).await;
    for (veto, status) in [
        (json!({"value": "no", "remark": "not tonight"}), "answered"),
        (json!({"action": "decline"}), "declined"),
    ] {
        let h = srv
            .create(json!({"question": "Drop the table?", "kind": "bool",
                            "approvers": ["ana", "ben", "cy"], "required": 3}))
            .await;
        let id = s(&h, "decision_id");
        let (st, _) = post(
            srv,
            &link(srv, id, &people[0]).await,
            json!({"value": "yes"}),
        )
        .await;
        assert_eq!(st, StatusCode::OK);
        let (st, body) = post(srv, &link(srv, id, &people[1]).await, veto.clone()).await;
        assert_eq!(st, StatusCode::OK, "{body}");
        let d = srv.get(id).await;
        assert_eq!(d["status"], status, "{d}");
        if status == "answered" {
            assert_eq!(d["outcome"], false);
            assert_eq!(d["remark"], "not tonight");
        }
        assert_eq!(names(&d), ["ana", "ben"]);
        let (st, _) = post(
            srv,
            &link(srv, id, &people[2]).await,
            json!({"value": "yes"}),
        )
        .await;
        assert_eq!(st, StatusCode::CONFLICT);
    }
}

pub async fn only_the_people_asked_see_and_answer(srv: &TestServer) {
    let people = add_people(srv, &["ana", "cy"]).await;
    let (ana, cy) = (&people[0], &people[1]);
    let h = srv
        .create(json!({"question": "Rotate the keys?", "kind": "bool", "approvers": ["ana"]}))
        .await;
    let id = s(&h, "decision_id");
    // Not an approver: their link opens nothing, and their feed does not list it.
    let (status, _) = post(srv, &link(srv, id, cy).await, json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let page = srv
        .client
        .get(link(srv, id, cy).await)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    let feed_of = |p: &Person| {
        let token = srv.svc.tokens().feed_token(p.id);
        let link = srv.url(&format!("/inbox/{token}"));
        async move { crate::common::server::feed_page(&link).await.1 }
    };
    let cy_feed = feed_of(cy).await;
    assert!(!cy_feed.contains("Rotate the keys?"));
    let ana_feed = feed_of(ana).await;
    assert!(ana_feed.contains("Rotate the keys?"));
    // The agent's own link does not answer a decision sent to people by name.
    let (status, body) = post(srv, s(&h, "web_url"), json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere");
    let (status, _) = post(srv, &link(srv, id, ana).await, json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::OK);
    let d = srv.get(id).await;
    assert_eq!(d["status"], "answered");
    assert_eq!(names(&d), ["ana"]);
}

pub async fn names_and_counts_that_cannot_work_are_refused(srv: &TestServer) {
    add_people(srv, &["ana"]).await;
    for (body, path) in [
        (
            json!({"question": "q", "kind": "bool", "approvers": ["zed"]}),
            "approvers[0]",
        ),
        (
            json!({"question": "q", "kind": "bool", "approvers": ["ana"], "required": 2}),
            "required",
        ),
        (
            json!({"question": "q", "kind": "bool", "required": 3}),
            "required",
        ),
        (
            json!({"question": "q", "kind": "text", "required": 2}),
            "required",
        ),
        (
            json!({"question": "q", "kind": "bool", "approvers": ["Ana!"]}),
            "approvers[0]",
        ),
        (
            json!({"question": "q", "kind": "bool", "escalate_to": ["ana"]}),
            "escalate_to",
        ),
        (
            json!({"question": "q", "kind": "bool", "ttl_seconds": 60, "escalate_after_s": 60}),
            "escalate_after_s",
        ),
        (
            json!({"question": "q", "kind": "bool", "approvers": "ana"}),
            "approvers",
        ),
    ] {
        let (status, err) = send(srv.req(reqwest::Method::POST, "/v1/decisions").json(&body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {err}");
        let paths: Vec<&str> = err["error"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["path"].as_str().unwrap())
            .collect();
        assert!(paths.contains(&path), "{body}: {err}");
    }
}

pub async fn one_person_alone_sees_nothing_new(srv: &TestServer) {
    let h = srv
        .create(json!({"question": "Deploy?", "kind": "bool"}))
        .await;
    let d = srv.get(s(&h, "decision_id")).await;
    assert!(
        d.get("progress").is_none() && d.get("routing").is_none(),
        "{d}"
    );
    assert_eq!(d["answers"], json!([]));
    let (status, _) = post(srv, s(&h, "web_url"), json!({"value": "yes"})).await;
    assert_eq!(status, StatusCode::OK);
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(d["status"], "answered");
    // Through the agent's link, from a browser bound to nobody: nobody is named.
    assert_eq!(d["answers"][0]["person"], Value::Null);
    assert_eq!(d["answers"][0]["channel"], "link");
    assert_eq!(d["answers"][0]["value"], true);
}

/// Everyone answers several times at once: each counts once, and the decision resolves
/// once, when the last of them is counted.
pub async fn racing_answers_count_each_person_once(srv: &TestServer) {
    race(srv, &[srv]).await;
}

pub async fn race(first: &TestServer, replicas: &[&TestServer]) {
    const PEOPLE: usize = 6;
    let names: Vec<String> = (0..PEOPLE).map(|i| format!("p{i}")).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let people = add_people(first, &name_refs).await;
    for round in 0..4 {
        let h = first
            .create(json!({"question": format!("race {round}"), "kind": "bool",
                            "approvers": names, "required": PEOPLE}))
            .await;
        let id = s(&h, "decision_id").to_string();
        let mut tasks = Vec::new();
        for (i, p) in people.iter().enumerate() {
            for attempt in 0..4 {
                let srv = replicas[(i + attempt) % replicas.len()];
                let url = link(srv, &id, p).await;
                let client = srv.client.clone();
                tasks.push(tokio::spawn(async move {
                    send(client.post(url).json(&json!({"value": "yes"}))).await
                }));
            }
        }
        for t in tasks {
            let (status, body) = t.await.unwrap();
            assert!(
                status == StatusCode::OK || status == StatusCode::CONFLICT,
                "{status}: {body}"
            );
        }
        let d = first.get(&id).await;
        assert_eq!(d["status"], "answered", "{d}");
        let mut seen = self::names(&d);
        seen.sort();
        assert_eq!(seen, names, "each person exactly once");
        let (_, events) =
            send(first.req(reqwest::Method::GET, &format!("/v1/decisions/{id}/events"))).await;
        let events = events["items"].as_array().unwrap().clone();
        let count = |k: &str| events.iter().filter(|e| e["kind"] == k).count();
        assert_eq!(count("answered"), 1, "{events:?}");
        assert_eq!(count("voted"), PEOPLE - 1, "{events:?}");
    }
}
