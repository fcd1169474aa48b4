//! `sayso ask` naming people: `--approvers`, `--required`, `--escalate-after`, `--escalate-to`
//! and `--urgent` reach the server as the create's fields, the decision is then answered by
//! those people only, and a flag value the server could never take is refused by the client.

mod common;

use std::process::Output;

use common::cli::{agent, agent_json, output, stderr};
use common::people::feed_link;
use common::server::{TestServer, fresh_server, s, send};
use reqwest::{Method, StatusCode};
use sayso::domain::people::Person;
use serde_json::{Value, json};

/// `sayso ARGS` against the server with its key.
async fn run(srv: &TestServer, args: &[&str]) -> Output {
    output(agent(srv, args)).await
}

/// `person` answers decision `id` through their own feed link.
async fn answer_as(
    srv: &TestServer,
    id: &str,
    person: &Person,
    answer: Value,
) -> (StatusCode, Value) {
    let url = feed_link(srv, id, person.id).await;
    send(srv.client.post(url).json(&answer)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_for_one_approver_is_answered_by_them_alone() {
    let (_db, srv) = fresh_server().await;
    let ana = srv.add_person("ana").await;
    let ben = srv.add_person("ben").await;
    let handle = agent_json(
        &srv,
        &[
            "ask",
            "Deploy?",
            "--kind",
            "bool",
            "--approvers",
            "ana",
            "--required",
            "1",
            "--json",
        ],
    )
    .await;
    let id = s(&handle, "decision_id").to_string();
    let d = srv.get(&id).await;
    assert_eq!(
        d["routing"],
        json!({"approvers": ["ana"], "required": 1}),
        "{d}"
    );
    // The agent's link only shows it now.
    let (status, body) = send(
        srv.client
            .post(s(&handle, "web_url"))
            .json(&json!({"action": "answer", "value": "yes"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere", "{body}");
    // ben is not asked; ana is, and her yes resolves it.
    let yes = json!({"action": "answer", "value": "yes"});
    let (status, _) = answer_as(&srv, &id, &ben, yes.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = answer_as(&srv, &id, &ana, yes).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let d = srv.get(&id).await;
    assert_eq!(
        (d["status"].as_str(), &d["outcome"]),
        (Some("answered"), &json!(true))
    );
    assert_eq!(d["answers"][0]["person"], "ana", "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_people_flag_reaches_the_decision() {
    let (_db, srv) = fresh_server().await;
    for name in ["ana", "ben", "cy"] {
        srv.add_person(name).await;
    }
    // Urgent is the operator's to allow a key.
    assert!(srv.svc.set_key_urgent(&srv.key, true).await.unwrap());
    let handle = agent_json(
        &srv,
        &[
            "ask",
            "Rotate the prod keys?",
            "--kind",
            "bool",
            "--approvers",
            "ana,ben",
            "--required",
            "2",
            "--escalate-after",
            "10m",
            "--escalate-to",
            "cy",
            "--urgent",
            "--ttl",
            "1h",
            "--json",
        ],
    )
    .await;
    let d = srv.get(s(&handle, "decision_id")).await;
    assert_eq!(
        d["routing"],
        json!({"approvers": ["ana", "ben"], "required": 2, "escalate_after_s": 600,
               "escalate_to": ["cy"], "urgent": true}),
        "{d}"
    );
    assert_eq!(d["progress"], "0 of 2 said yes", "{d}");
    // `todo` takes approvers too.
    let handle = agent_json(
        &srv,
        &["todo", "Renew the cert", "--approvers", "cy", "--json"],
    )
    .await;
    let d = srv.get(s(&handle, "decision_id")).await;
    assert_eq!(d["routing"]["approvers"], json!(["cy"]), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_or_a_name_that_cannot_work_is_refused_with_a_clear_error() {
    let (_db, srv) = fresh_server().await;
    srv.add_person("ana").await;
    let refused = [
        (
            vec!["--approvers", "ana", "--required", "0"],
            "invalid value '0' for '--required <N>': 0 is not in 1..=50",
        ),
        (vec!["--approvers", "Ana"], "\"Ana\" is not a person's name"),
        (vec!["--escalate-to", "ana"], "--escalate-after"),
        (vec!["--escalate-after", "0s"], "no time at all"),
    ];
    for (flags, says) in refused {
        let args: Vec<&str> = ["ask", "Deploy?", "--kind", "bool"]
            .into_iter()
            .chain(flags.iter().copied())
            .collect();
        let out = run(&srv, &args).await;
        assert_eq!(out.status.code(), Some(64), "{flags:?}: {out:?}");
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
    // What only the server knows comes back as its message, named by the flag: nobody named
    // ben, and more people to agree than are named.
    let out = run(
        &srv,
        &[
            "ask",
            "Deploy?",
            "--kind",
            "bool",
            "--approvers",
            "ana,ben",
            "--required",
            "2",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("validation_failed")
            && err.contains("--approvers: ")
            && err.contains("\"ben\"")
            && !err.contains("approvers[1]"),
        "{err}"
    );
    let out = run(
        &srv,
        &["ask", "Which?", "--kind", "text", "--required", "2"],
    )
    .await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(
        stderr(&out).contains("--required: more than one person"),
        "{}",
        stderr(&out)
    );
    let (_, page) = send(srv.req(Method::GET, "/v1/decisions")).await;
    assert_eq!(page["items"], json!([]), "nothing was created");
}
