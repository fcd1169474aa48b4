//! Standing allowances: only the person's Allow on their own link makes one; the key reads
//! and revokes them; one counts until its time exactly, by the server's clock.

use reqwest::Method;
use reqwest::StatusCode;
use sayso::domain::AnswerChannel;
use sayso::domain::allowance::{Allowance, Scope};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::common::people::feed_link;
use crate::common::server::{TestServer, s, send};

/// A tool approval as the hook asks it, with `extra` merged into its `approval`.
async fn approval(srv: &TestServer, extra: Value) -> Value {
    let mut a = json!({"harness": "claude", "tool_name": "Bash", "session_id": "s1",
                       "cwd": "/home/me/shop", "tool_input": {"command": "ls -la"},
                       "honours_allowances": true});
    for (k, v) in extra.as_object().unwrap() {
        a[k] = v.clone();
    }
    srv.create(json!({
        "question": "Claude Code wants to run: ls -la",
        "kind": "choose",
        "project": "shop",
        "options": ["Allow", "Deny"],
        "approval": a,
    }))
    .await
}

async fn allowances(srv: &TestServer, query: &str) -> Vec<Value> {
    let (status, body) = send(srv.req(Method::GET, &format!("/v1/allowances{query}"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["items"].as_array().unwrap().clone()
}

fn time_of(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().unwrap(), &Rfc3339).unwrap()
}

pub async fn a_persons_allow_for_a_while_is_read_and_revoked_with_the_key(srv: &TestServer) {
    assert!(allowances(srv, "").await.is_empty());
    let h = approval(srv, json!({})).await;
    let before = OffsetDateTime::now_utc();
    let body = srv
        .answer_ok(
            s(&h, "web_url"),
            json!({"value": "Allow", "allow_for": "15m"}),
        )
        .await;
    assert_eq!(body["outcome"], "Allow", "{body}");

    let all = allowances(srv, "").await;
    assert_eq!(all.len(), 1, "{all:?}");
    let a = &all[0];
    assert_eq!(a["decision_id"], h["decision_id"]);
    assert_eq!(a["allowed_by"], "default", "{a}");
    assert_eq!(a["channel"], "feed", "{a}");
    assert_eq!(a["session_id"], "s1", "{a}");
    assert_eq!(
        a["scope"],
        json!({"harness": "claude", "project": "shop", "tool_name": "Bash", "rule": null})
    );
    let until = time_of(&a["until"]);
    let minutes = (until - before).whole_seconds();
    assert!((14 * 60..=15 * 60 + 5).contains(&minutes), "{a}");

    // The hook's question: exactly this scope, and nothing else.
    let q = "?harness=claude&tool_name=Bash&project=shop";
    assert_eq!(allowances(srv, q).await.len(), 1);
    for other in [
        "?harness=claude&tool_name=Write&project=shop",
        "?harness=codex&tool_name=Bash&project=shop",
        "?harness=claude&tool_name=Bash&project=blog",
        "?harness=claude&tool_name=Bash",
        "?harness=claude&tool_name=Bash&project=shop&rule=rule%201",
    ] {
        assert!(allowances(srv, other).await.is_empty(), "{other}");
    }
    let (status, body) = send(srv.req(Method::GET, "/v1/allowances?tool_name=Bash")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "harness", "{body}");

    // Another inbox's key sees none of them, and cannot revoke them.
    let other = srv.other_inbox_key("elsewhere").await;
    let id = s(a, "id").to_string();
    let (status, body) = send(
        srv.client
            .get(srv.url("/v1/allowances"))
            .bearer_auth(&other),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["items"], json!([]));
    let (status, _) = send(
        srv.client
            .delete(srv.url(&format!("/v1/allowances/{id}")))
            .bearer_auth(&other),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(allowances(srv, "").await.len(), 1);

    let (status, body) = send(srv.req(Method::DELETE, &format!("/v1/allowances/{id}"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["revoked"], 1);
    assert!(allowances(srv, q).await.is_empty());
    let (status, body) = send(srv.req(Method::DELETE, &format!("/v1/allowances/{id}"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = send(srv.req(Method::DELETE, "/v1/allowances/not-an-id")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Revoking all.
    for allow_for in ["60m", "morning"] {
        let h = approval(srv, json!({})).await;
        srv.answer_ok(
            s(&h, "web_url"),
            json!({"value": "Allow", "allow_for": allow_for}),
        )
        .await;
    }
    assert_eq!(allowances(srv, "").await.len(), 2);
    let (status, body) = send(srv.req(Method::DELETE, "/v1/allowances")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["revoked"], 2);
    assert!(allowances(srv, "").await.is_empty());
    let (status, _) = send(srv.client.get(srv.url("/v1/allowances"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

pub async fn only_the_persons_allow_on_their_own_approval_makes_one(srv: &TestServer) {
    // The key has no way to make one: no create, and an approval's web_url answers nothing.
    let (status, _) = send(
        srv.req(Method::POST, "/v1/allowances")
            .json(&json!({"scope": {"harness": "claude", "tool_name": "Bash"}})),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let h = approval(srv, json!({})).await;
    let (status, body) = send(
        srv.client
            .post(s(&h, "web_url"))
            .json(&json!({"value": "Allow", "allow_for": "60m"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere");

    // A look-alike plain question the agent answers through its own link: an answer, and no
    // allowance.
    let lookalike = srv
        .create(
            json!({"question": "Allow Bash for an hour?", "kind": "choose",
                       "options": ["Allow", "Deny"]}),
        )
        .await;
    let (status, body) = send(
        srv.client
            .post(s(&lookalike, "web_url"))
            .json(&json!({"value": "Allow", "allow_for": "60m"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(allowances(srv, "").await.is_empty());

    // With any answer but Allow, or a choice that is not one, nothing changes.
    for (answer, path) in [
        (json!({"value": "Deny", "allow_for": "15m"}), "allow_for"),
        (json!({"value": "Allow", "allow_for": "1d"}), "allow_for"),
        (json!({"value": "Allow", "allow_for": 15}), "allow_for"),
        (
            json!({"action": "decline", "allow_for": "15m"}),
            "allow_for",
        ),
    ] {
        let (status, body) = srv.answer(s(&h, "web_url"), answer.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}: {body}");
        assert_eq!(body["error"]["details"][0]["path"], path, "{body}");
    }
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "pending");

    // Never on an approval whose asker does not look allowances up (a framework adapter, the
    // MCP `approve` tool): nothing would honour it. Its page offers no "for a while" either.
    let framework = approval(
        srv,
        json!({"harness": "pydantic-ai", "honours_allowances": false}),
    )
    .await;
    let (status, body) = srv
        .answer(
            s(&framework, "web_url"),
            json!({"value": "Allow", "allow_for": "15m"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body.to_string().contains("does not honour allowances"),
        "{body}"
    );
    let page = |h: Value| async move {
        let url = srv.person_url(s(&h, "web_url")).await;
        srv.client
            .get(url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let shown = page(framework).await;
    assert!(
        shown.contains("id=\"allow\""),
        "the page offers no Allow: {shown}"
    );
    assert!(
        !shown.contains("allow_for"),
        "a button for a while is offered: {shown}"
    );
    let shown = page(approval(srv, json!({})).await).await;
    assert!(
        shown.contains("allow_for"),
        "the hook's approval offers it: {shown}"
    );

    // Never under a passkey rule, nor one naming people.
    let passkey = approval(srv, json!({"step_up": "passkey"})).await;
    let (status, body) = srv
        .answer(
            s(&passkey, "web_url"),
            json!({"value": "Allow", "allow_for": "15m"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("passkey"), "{body}");
    assert_eq!(
        srv.get(s(&passkey, "decision_id")).await["status"],
        "pending"
    );
    let ana = srv.add_person("ana").await;
    let named = srv
        .create(json!({
            "question": "Claude Code wants to run: make release",
            "kind": "choose", "options": ["Allow", "Deny"], "approvers": ["ana"],
            "approval": {"harness": "claude", "tool_name": "Bash", "honours_allowances": true,
                         "tool_input": {"command": "make release"}},
        }))
        .await;
    let url = feed_link(srv, s(&named, "decision_id"), ana.id).await;
    let (status, body) = send(
        srv.client
            .post(url)
            .json(&json!({"value": "Allow", "allow_for": "15m"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("names who must agree"), "{body}");
    assert!(allowances(srv, "").await.is_empty());

    // Answered once, never again: a second Allow cannot extend it.
    srv.answer_ok(
        s(&h, "web_url"),
        json!({"value": "Allow", "allow_for": "15m"}),
    )
    .await;
    let first = allowances(srv, "").await;
    assert_eq!(first.len(), 1);
    let (status, body) = srv
        .answer(
            s(&h, "web_url"),
            json!({"value": "Allow", "allow_for": "morning"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(allowances(srv, "").await, first);
}

pub async fn an_allowance_counts_until_its_time_exactly(srv: &TestServer) {
    let h = approval(srv, json!({})).await;
    let store = srv.svc.store();
    let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();
    let inbox = srv.default_inbox().await.id;
    let until = sayso::service::now() + time::Duration::minutes(15);
    let scope = Scope {
        harness: "claude".into(),
        project: Some("shop".into()),
        tool_name: "Bash".into(),
        rule: Some("rule 1 of /p/policy.json (Bash)".into()),
    };
    let made = Allowance {
        id: Uuid::now_v7(),
        inbox_id: inbox,
        decision_id: id,
        person_id: Some(inbox),
        person: Some("default".into()),
        channel: AnswerChannel::Feed,
        scope: scope.clone(),
        session_id: None,
        created_at: sayso::service::now(),
        until,
    };
    assert_eq!(store.add_allowance(&made).await.unwrap(), made);
    // One per decision: a second one from it is the first, not a longer one.
    let longer = Allowance {
        id: Uuid::now_v7(),
        until: until + time::Duration::hours(5),
        ..made.clone()
    };
    assert_eq!(store.add_allowance(&longer).await.unwrap(), made);

    let ms = time::Duration::milliseconds(1);
    let at = |t| store.allowances(inbox, Some(&scope), t);
    assert_eq!(at(until - ms).await.unwrap(), std::slice::from_ref(&made));
    assert!(at(until).await.unwrap().is_empty());
    assert!(
        store
            .allowances(inbox, None, until)
            .await
            .unwrap()
            .is_empty()
    );
    let no_rule = Scope {
        rule: None,
        ..scope.clone()
    };
    assert!(
        store
            .allowances(inbox, Some(&no_rule), until - ms)
            .await
            .unwrap()
            .is_empty()
    );
    // The sweep deletes it once it ended, not a moment before.
    assert_eq!(store.delete_ended_allowances(until - ms).await.unwrap(), 0);
    assert_eq!(store.delete_ended_allowances(until).await.unwrap(), 1);
    assert!(at(until - ms).await.unwrap().is_empty());
}

/// A use the hook records, for the allowance `id`, with `extra` merged in.
async fn record_use(srv: &TestServer, key: &str, id: &str, extra: Value) -> (StatusCode, Value) {
    let mut body = json!({"harness": "claude", "tool_name": "Bash", "project": "shop",
                          "tool_input": {"command": "git status"}, "session_id": "s2",
                          "cwd": "/home/me/shop", "tool_use_id": "toolu_1"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    send(
        srv.client
            .post(srv.url(&format!("/v1/allowances/{id}/uses")))
            .bearer_auth(key)
            .json(&body),
    )
    .await
}

async fn uses(srv: &TestServer, key: &str, id: &str) -> Value {
    let (status, body) = send(
        srv.client
            .get(srv.url(&format!("/v1/allowances/{id}/uses")))
            .bearer_auth(key),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub async fn each_call_an_allowance_lets_through_is_recorded_in_its_inbox_alone(srv: &TestServer) {
    let h = approval(srv, json!({})).await;
    srv.answer_ok(
        s(&h, "web_url"),
        json!({"value": "Allow", "allow_for": "15m"}),
    )
    .await;
    let all = allowances(srv, "").await;
    let id = s(&all[0], "id").to_string();
    assert_eq!(all[0]["uses"], 0, "{all:?}");

    let (status, used) = record_use(srv, &srv.key, &id, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{used}");
    assert_eq!(used["allowance_id"], id.as_str(), "{used}");
    assert_eq!(used["decision_id"], h["decision_id"], "{used}");
    assert_eq!(
        used["call"]["tool_input"]["command"], "git status",
        "{used}"
    );
    assert_eq!(used["call"]["session_id"], "s2", "{used}");
    assert_eq!(used["warnings"], json!([]), "{used}");
    assert_eq!(allowances(srv, "").await[0]["uses"], 1);
    let listed = uses(srv, &srv.key, &id).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["items"][0]["id"], used["id"], "{listed}");
    assert_eq!(listed["next"], Value::Null);

    // In the audit trail of the approval whose Allow made it.
    let (status, events) = send(srv.req(
        Method::GET,
        &format!("/v1/decisions/{}/events", s(&h, "decision_id")),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{events}");
    let trail = events["items"].as_array().unwrap();
    let use_event = trail
        .iter()
        .find(|e| e["kind"] == "allowance_used")
        .unwrap_or_else(|| panic!("no use in {events}"));
    assert_eq!(use_event["detail"]["allowance_id"], id.as_str());
    assert_eq!(use_event["detail"]["tool_input"]["command"], "git status");

    // Each bad part is named, and nothing is recorded.
    let big = "x".repeat(300 * 1024);
    for (extra, path) in [
        (json!({"tool_name": "Write"}), "tool_name"),
        (json!({"harness": "codex"}), "harness"),
        (json!({"project": "blog"}), "project"),
        (json!({"project": null}), "project"),
        (json!({"rule": "rule 1"}), "rule"),
        (json!({"harness": null}), "harness"),
        (json!({"tool_input": "ls"}), "tool_input"),
        (json!({"tool_input": {"command": big}}), "tool_input"),
        (json!({"session_id": "s".repeat(201)}), "session_id"),
        (json!({"cwd": "/".repeat(4001)}), "cwd"),
    ] {
        let (status, body) = record_use(srv, &srv.key, &id, extra.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{extra}: {body}");
        assert_eq!(body["error"]["details"][0]["path"], path, "{extra}: {body}");
    }
    let (status, body) = send(
        srv.req(Method::POST, &format!("/v1/allowances/{id}/uses"))
            .header("content-type", "application/json")
            .body(vec![b' '; 600 * 1024]),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    // Another inbox's key can neither record a use of it nor read its uses.
    let other = srv.other_inbox_key("elsewhere").await;
    let (status, body) = record_use(srv, &other, &id, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(uses(srv, &other, &id).await["items"], json!([]));
    assert_eq!(allowances(srv, "").await[0]["uses"], 1);

    // The key cannot edit or delete a use, and revoking the allowance keeps its uses.
    for method in [Method::DELETE, Method::PUT, Method::PATCH] {
        let (status, _) = send(srv.req(method.clone(), &format!("/v1/allowances/{id}/uses"))).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
    }
    let (status, body) = send(srv.req(Method::DELETE, &format!("/v1/allowances/{id}"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = record_use(srv, &srv.key, &id, json!({})).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a revoked allowance records no use: {body}"
    );
    assert_eq!(
        uses(srv, &srv.key, &id).await["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let (_, events) = send(srv.req(
        Method::GET,
        &format!("/v1/decisions/{}/events", s(&h, "decision_id")),
    ))
    .await;
    let kept = events["items"].as_array().unwrap();
    assert_eq!(
        kept.iter()
            .filter(|e| e["kind"] == "allowance_used")
            .count(),
        1
    );
    let (status, _) = send(srv.req(Method::GET, "/v1/allowances/not-an-id/uses")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) =
        send(srv.req(Method::GET, &format!("/v1/allowances/{id}/uses?limit=0"))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "limit", "{body}");

    // One allowance lets 1,000 calls through; past them each is refused, and so asked.
    let h = approval(srv, json!({})).await;
    srv.answer_ok(
        s(&h, "web_url"),
        json!({"value": "Allow", "allow_for": "60m"}),
    )
    .await;
    let id = s(&allowances(srv, "").await[0], "id").to_string();
    let call: sayso::domain::allowance::uses::UsedCall = serde_json::from_value(
        json!({"harness": "claude", "tool_name": "Bash", "project": "shop",
               "tool_input": {"command": "true"}, "cwd": null, "rule": null,
               "session_id": null, "tool_use_id": null}),
    )
    .unwrap();
    let inbox = srv.default_inbox().await.id;
    let allowance = Uuid::parse_str(&id).unwrap();
    for _ in 0..999 {
        srv.svc
            .store()
            .record_allowance_use(inbox, allowance, &call, sayso::service::now())
            .await
            .unwrap();
    }
    let (status, body) = record_use(srv, &srv.key, &id, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "the 1,000th: {body}");
    let (status, body) = record_use(srv, &srv.key, &id, json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        s(&body["error"], "message").contains("1000 calls"),
        "{body}"
    );
    assert_eq!(allowances(srv, "").await[0]["uses"], 1000);
}
