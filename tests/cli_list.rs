//! `sayso list`: what is in the inbox, as a table a person reads or JSON lines a script
//! reads, every page of it, filtered by status.

mod common;

use std::process::Output;

use common::cli::{agent, output, stdout};
use common::server::{TestServer, fresh_server, s};
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;

async fn list(srv: &TestServer, args: &[&str]) -> Output {
    let mut cmd = agent(srv, &[&["list"], args].concat());
    cmd.env("COLUMNS", "100").env("TZ", "Asia/Kolkata");
    output(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_a_table_and_json_lines_filtered_by_status() {
    let (_db, srv) = fresh_server().await;
    let empty = list(&srv, &["--status", "pending"]).await;
    assert!(empty.status.success(), "{empty:?}");
    assert_eq!(stdout(&empty), "");
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("nothing is pending"),
        "{empty:?}"
    );

    let long = "Deploy the new version of the billing service to production before the \
                freeze begins on Friday evening?";
    let deploy = srv.create(json!({"question": long, "kind": "bool"})).await;
    let todo = srv
        .create(json!({"question": "Renew the cert", "kind": "todo"}))
        .await;
    let gone = srv
        .create(json!({"question": "Old question", "kind": "text"}))
        .await;
    let (status, _) = common::server::send(srv.req(
        reqwest::Method::POST,
        &format!("/v1/decisions/{}/cancel", s(&gone, "decision_id")),
    ))
    .await;
    assert_eq!(status, 200);

    let out = list(&srv, &[]).await;
    assert!(out.status.success(), "{out:?}");
    let table = stdout(&out);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("STATUS") && lines[0].contains("QUESTION"),
        "{table}"
    );
    // Newest first; the long question cut to fit the 100 columns.
    assert!(lines[1].starts_with(s(&gone, "decision_id")), "{table}");
    // Times in the machine's zone (TZ), with its name: when it was made, when it expires.
    let clock = |field: &str, handle: &Value| {
        let t = time::OffsetDateTime::parse(s(handle, field), &Rfc3339).unwrap();
        sayso::render::Zone::named("Asia/Kolkata").clock(t, time::OffsetDateTime::now_utc())
    };
    assert!(
        lines[1].contains("cancelled") && lines[1].contains(" IST "),
        "{table}"
    );
    assert!(
        lines[2].contains("todo")
            && lines[2].contains(&format!("until {}", clock("expires_at", &todo))),
        "{table}"
    );
    assert!(lines[2].contains(" IST "), "{table}");
    assert!(lines[3].starts_with(s(&deploy, "decision_id")), "{table}");
    assert!(
        lines[3].chars().count() <= 100 && lines[3].ends_with('…'),
        "{table}"
    );

    let out = list(&srv, &["--status", "pending", "--json"]).await;
    assert!(out.status.success(), "{out:?}");
    let items: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let ids: Vec<&str> = items.iter().map(|d| s(d, "decision_id")).collect();
    assert_eq!(
        ids,
        [s(&todo, "decision_id"), s(&deploy, "decision_id")],
        "pending only, newest first"
    );
    assert_eq!(items[1]["question"], long);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_through_everything() {
    let (_db, srv) = fresh_server().await;
    // More than one page of the API's largest (200).
    let mut made = Vec::new();
    for i in 0..230 {
        made.push(
            srv.create(json!({"question": format!("Q{i}?"), "kind": "bool"}))
                .await,
        );
    }
    let out = list(&srv, &["--json"]).await;
    assert!(out.status.success(), "{out:?}");
    let ids: Vec<String> = stdout(&out)
        .lines()
        .map(|l| s(&serde_json::from_str::<Value>(l).unwrap(), "decision_id").to_string())
        .collect();
    assert_eq!(ids.len(), 230);
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 230, "no decision twice");
    assert_eq!(ids[0], s(&made[229], "decision_id"));
    assert_eq!(ids[229], s(&made[0], "decision_id"));
}
