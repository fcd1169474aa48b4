//! `sayso allowances`: the standing allowances the person gave, listed as a table or JSON
//! lines, and revoked one by one or all at once, with the inbox's API key.

mod common;

use std::process::Output;

use common::cli::{agent, output, output_with_input, stdout};
use common::server::{TestServer, fresh_server, s};
use serde_json::{Value, json};

async fn sayso(srv: &TestServer, args: &[&str]) -> Output {
    output(agent(srv, &[&["allowances"], args].concat())).await
}

/// A tool approval the person allows for `allow_for` from their feed.
async fn allowed(srv: &TestServer, tool: &str, allow_for: &str) -> Value {
    let h = srv
        .create(json!({
            "question": format!("Claude Code wants to use {tool}"), "kind": "choose",
            "project": "shop", "options": ["Allow", "Deny"],
            "approval": {"harness": "claude", "tool_name": tool, "session_id": "s1",
                         "tool_input": {"command": "ls"}, "honours_allowances": true},
        }))
        .await;
    srv.answer_ok(
        s(&h, "web_url"),
        json!({"value": "Allow", "allow_for": allow_for}),
    )
    .await;
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowances_are_listed_and_revoked() {
    let (_db, srv) = fresh_server().await;
    let none = sayso(&srv, &[]).await;
    assert!(none.status.success(), "{none:?}");
    assert_eq!(stdout(&none), "");
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("no allowance counts now"),
        "{none:?}"
    );

    allowed(&srv, "Bash", "15m").await;
    allowed(&srv, "Write", "60m").await;
    let table = sayso(&srv, &[]).await;
    assert!(table.status.success(), "{table:?}");
    let text = stdout(&table);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("UNTIL"),
        "{text}"
    );
    // Soonest end first.
    assert!(
        lines[1].contains("claude Bash in shop, calls no rule asks about"),
        "{text}"
    );
    assert!(lines[1].contains("default"), "{text}");
    assert!(lines[2].contains("claude Write in shop"), "{text}");

    let json_lines = stdout(&sayso(&srv, &["--json"]).await);
    let items: Vec<Value> = json_lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(items.len(), 2);
    let bash = s(&items[0], "id").to_string();

    let out = sayso(&srv, &["revoke", &bash]).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), format!("revoked {bash}\n"));
    let left = stdout(&sayso(&srv, &["--json"]).await);
    assert_eq!(left.lines().count(), 1, "{left}");
    assert!(left.contains("\"Write\""), "{left}");

    // An id that is gone, or none at all, is an error that says so.
    let out = sayso(&srv, &["revoke", &bash]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    let out = sayso(&srv, &["revoke"]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("<ID>"),
        "{out:?}"
    );

    let out = sayso(&srv, &["revoke", "--all"]).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), "revoked 1 allowance\n");
    assert_eq!(stdout(&sayso(&srv, &["--json"]).await), "");
}

/// Runs `sayso` itself (not `allowances`) with `args`, `stdin` on its input.
async fn sayso_cmd(srv: &TestServer, args: &[&str], stdin: &str) -> Output {
    let mut cmd = agent(srv, args);
    cmd.env_remove("SAYSO_RECEIPT_KEY");
    output_with_input(cmd, stdin).await
}

/// The receipt of an Allow for a while signs the allowance it made, exactly as listed, and
/// `sayso verify` checks it; changing its end, length or scope is named at its seq.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowance_is_signed_in_its_receipt_and_verified() {
    let (_db, srv) = fresh_server().await;
    let plain = srv
        .create(json!({"question": "plain", "kind": "bool"}))
        .await;
    srv.answer_ok(s(&plain, "web_url"), json!({"value": true}))
        .await;
    let h = allowed(&srv, "Bash", "15m").await;
    let listed: Value =
        serde_json::from_str(stdout(&sayso(&srv, &["--json"]).await).trim()).unwrap();

    let chain = stdout(&sayso_cmd(&srv, &["receipts"], "").await);
    let lines: Vec<Value> = chain
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{chain}");
    assert!(lines[0]["receipt"].get("allowance").is_none(), "{chain}");
    let signed = &lines[1]["receipt"];
    assert_eq!(signed["decision_id"], h["decision_id"]);
    assert_eq!(signed["allowance"]["allow_for"], "15m");
    assert_eq!(signed["allowance"]["scope"], listed["scope"], "{listed}");
    let at = |v: &Value| {
        time::OffsetDateTime::parse(
            v.as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
    };
    assert_eq!(at(&signed["allowance"]["until"]), at(&listed["until"]));

    let key = stdout(&sayso_cmd(&srv, &["receipts", "--public-key"], "").await);
    let key = key.trim();
    let out = sayso_cmd(&srv, &["verify", "-", "--key", key], &chain).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("seq 1 to 2, unbroken"), "{out:?}");

    for (part, value) in [
        ("until", json!("2099-01-01T00:00:00Z")),
        ("allow_for", json!("morning")),
        (
            "scope",
            json!({"harness": "claude", "project": null, "tool_name": "Bash",
                         "rule": null}),
        ),
    ] {
        let mut changed = lines.clone();
        changed[1]["receipt"]["allowance"][part] = value;
        let text: Vec<String> = changed.iter().map(Value::to_string).collect();
        let out = sayso_cmd(&srv, &["verify", "-", "--key", key], &text.join("\n")).await;
        assert_eq!(out.status.code(), Some(3), "{part}: {out:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("receipt seq 2: bad signature"),
            "{part}: {said}"
        );
    }
}

/// `sayso list --allowed-by ID` lists the calls an allowance let through, oldest first, as a
/// table or JSON lines; `sayso allowances` counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calls_an_allowance_let_through_are_listed_by_it() {
    let (_db, srv) = fresh_server().await;
    allowed(&srv, "Bash", "15m").await;
    let listed: Value =
        serde_json::from_str(stdout(&sayso(&srv, &["--json"]).await).trim()).unwrap();
    let id = s(&listed, "id").to_string();
    assert_eq!(listed["uses"], 0);
    for (command, session) in [("git status", "s2"), ("cargo test --all", "s3")] {
        let (status, body) = common::server::send(
            srv.req(reqwest::Method::POST, &format!("/v1/allowances/{id}/uses"))
                .json(
                    &json!({"harness": "claude", "tool_name": "Bash", "project": "shop",
                          "tool_input": {"command": command}, "session_id": session}),
                ),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }

    let out = sayso_cmd(&srv, &["list", "--allowed-by", &id], "").await;
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("AT") && lines[0].ends_with("CALL"),
        "{text}"
    );
    assert!(
        lines[1].contains("Bash") && lines[1].contains("s2") && lines[1].ends_with("git status"),
        "{text}"
    );
    assert!(lines[2].ends_with("cargo test --all"), "{text}");

    let out = sayso_cmd(&srv, &["list", "--allowed-by", &id, "--json"], "").await;
    let uses: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(uses.len(), 2, "{out:?}");
    assert_eq!(uses[0]["allowance_id"], id.as_str());
    assert_eq!(uses[1]["call"]["tool_input"]["command"], "cargo test --all");

    let table = stdout(&sayso(&srv, &[]).await);
    let row = table.lines().nth(1).unwrap();
    assert!(table.lines().next().unwrap().contains("USES"), "{table}");
    assert!(row.contains("     2  claude Bash in shop"), "{table}");

    // Revoked, its calls are still listed.
    let out = sayso(&srv, &["revoke", &id]).await;
    assert!(out.status.success(), "{out:?}");
    let out = sayso_cmd(&srv, &["list", "--allowed-by", &id, "--json"], "").await;
    assert_eq!(stdout(&out).lines().count(), 2, "{out:?}");

    // An id of no allowance lists nothing and says so; a malformed one is not found; the
    // decision filters do not go with it.
    let none = uuid::Uuid::now_v7().to_string();
    let out = sayso_cmd(&srv, &["list", "--allowed-by", &none], "").await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), "");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("let no call through"),
        "{out:?}"
    );
    let out = sayso_cmd(&srv, &["list", "--allowed-by", "nope"], "").await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let out = sayso_cmd(
        &srv,
        &["list", "--allowed-by", &id, "--status", "pending"],
        "",
    )
    .await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
}
