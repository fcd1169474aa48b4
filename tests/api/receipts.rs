//! Receipts: every resolution signed and chained per inbox, read back and checked against
//! the public key the server publishes.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use sayso::domain::PersonChannel;
use sayso::domain::receipt::{PublicKey, SignedReceipt, verify, verify_chain};

use crate::common::server::{TestServer, s, send};

/// The key `GET /v1/receipts/key` publishes (no API key needed).
pub async fn public_key(srv: &TestServer) -> PublicKey {
    let (status, body) = send(srv.client.get(srv.url("/v1/receipts/key"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["algorithm"], "Ed25519");
    let key = PublicKey::parse(s(&body, "public_key")).unwrap();
    assert_eq!(body["key_id"], key.key_id());
    key
}

/// The receipt of decision `id`, once it is there.
async fn receipt(srv: &TestServer, id: &str) -> SignedReceipt {
    let (status, body) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/receipt"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body).unwrap()
}

/// The whole chain of the key's inbox, page by page.
pub async fn chain(srv: &TestServer, page: u32) -> Vec<SignedReceipt> {
    let mut out = Vec::new();
    let mut from = Some(1);
    while let Some(seq) = from {
        let (status, body) = send(srv.req(
            Method::GET,
            &format!("/v1/receipts?from={seq}&limit={page}"),
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        for r in body["items"].as_array().unwrap() {
            out.push(serde_json::from_value(r.clone()).unwrap());
        }
        from = body["next_from"].as_u64();
    }
    out
}

pub async fn each_resolution_gets_a_signed_receipt_in_one_chain(srv: &TestServer) {
    let key = public_key(srv).await;
    let yes = srv
        .create(
            json!({"question": "Ship it?", "kind": "bool", "context_md": "all green",
                       "metadata": {"run": 7}}),
        )
        .await;
    let yes_id = s(&yes, "decision_id");
    // Pending: no receipt yet, said plainly.
    let (status, body) =
        send(srv.req(Method::GET, &format!("/v1/decisions/{yes_id}/receipt"))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "pending");

    srv.answer_ok(s(&yes, "web_url"), json!({"value": true, "remark": "go"}))
        .await;
    let r = receipt(srv, yes_id).await;
    let v = verify(&r, &key).unwrap();
    assert_eq!(v.receipt.seq, 1);
    assert_eq!(v.receipt.prev_sha256, None);
    assert_eq!(v.receipt.decision_id.to_string(), yes_id);
    assert_eq!(v.receipt.status.as_str(), "answered");
    assert_eq!(v.receipt.outcome, Some(json!(true)));
    assert_eq!(v.receipt.remark.as_deref(), Some("go"));
    assert_eq!(v.receipt.answered_by.unwrap().channel.as_str(), "link");
    assert_eq!(v.receipt.answers.len(), 1);
    // What was asked comes with it, hashes to the signed hash, and is what was shown.
    let asked = r.asked.as_ref().unwrap();
    assert_eq!(asked["question"], "Ship it?");
    assert_eq!(asked["context_md"], "all green");
    assert!(asked.get("metadata").is_none(), "{asked}");

    let no = srv
        .create(json!({"question": "Drop the table?", "kind": "bool"}))
        .await;
    srv.answer_ok(s(&no, "web_url"), json!({"action": "decline"}))
        .await;
    let gone = srv
        .create(json!({"question": "Still needed?", "kind": "bool"}))
        .await;
    let gone_id = s(&gone, "decision_id");
    let (status, _) = send(srv.req(Method::POST, &format!("/v1/decisions/{gone_id}/cancel"))).await;
    assert_eq!(status, StatusCode::OK);
    let late = srv
        .create(
            json!({"question": "Anyone?", "kind": "bool", "ttl_seconds": 10,
                       "default_outcome": false}),
        )
        .await;
    let late_id = s(&late, "decision_id");
    let (status, d) = srv.await_decision(late_id, 30).await;
    assert_eq!(
        (status, d["status"].as_str()),
        (StatusCode::OK, Some("expired"))
    );

    let expired = verify(&receipt(srv, late_id).await, &key).unwrap().receipt;
    assert_eq!(expired.status.as_str(), "expired");
    assert_eq!(expired.outcome, Some(json!(false)));
    assert_eq!(
        verify(&receipt(srv, gone_id).await, &key)
            .unwrap()
            .receipt
            .answered_by
            .unwrap()
            .channel
            .as_str(),
        "api"
    );

    // One chain, in the order of the resolutions, read two at a time.
    let all = chain(srv, 2).await;
    let summary = verify_chain(&all, &key).unwrap().unwrap();
    assert_eq!((summary.first_seq, summary.last_seq), (1, 4));
    let statuses: Vec<String> = all
        .iter()
        .map(|r| r.receipt["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["answered", "declined", "cancelled", "expired"]);
    // Served again, a receipt is the same bytes.
    assert_eq!(receipt(srv, yes_id).await.signature, all[0].signature);
}

pub async fn receipts_are_refused_clearly(srv: &TestServer) {
    let h = srv
        .create(json!({"question": "Mine?", "kind": "bool"}))
        .await;
    let id = s(&h, "decision_id");
    let path = format!("/v1/decisions/{id}/receipt");
    let (status, body) = send(srv.client.get(srv.url(&path))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let other = srv.other_inbox_key("receipts-other").await;
    let (status, body) = send(srv.client.get(srv.url(&path)).bearer_auth(&other)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = send(srv.req(
        Method::GET,
        &format!("/v1/decisions/{}/receipt", Uuid::now_v7()),
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = send(srv.req(Method::GET, "/v1/decisions/nope/receipt")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = send(srv.req(Method::GET, "/v1/receipts?from=0&limit=9999")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["details"].as_array().unwrap().len(), 2);
    // Another inbox's chain is its own, and empty.
    let (status, body) = send(srv.client.get(srv.url("/v1/receipts")).bearer_auth(&other)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["items"], json!([]));
}

pub async fn a_rule_of_several_people_signs_each_vote(srv: &TestServer) {
    let key = public_key(srv).await;
    let inbox = srv.default_inbox().await.id;
    let mut people = Vec::new();
    for name in ["ana", "ben"] {
        people.push(srv.add_person(name).await);
    }
    let h = srv
        .create(json!({"question": "Both agree?", "kind": "bool",
                       "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let id = Uuid::parse_str(s(&h, "decision_id")).unwrap();
    let d = srv
        .svc
        .store()
        .decision(Some(inbox), id)
        .await
        .unwrap()
        .unwrap();
    for p in &people {
        let url = srv.svc.approve_url(&d, PersonChannel::Feed, p.id);
        let (status, body) = send(srv.client.post(url).json(&json!({"value": "yes"}))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let r = verify(&receipt(srv, &id.to_string()).await, &key)
        .unwrap()
        .receipt;
    let who: Vec<(Option<String>, &str)> = r
        .answers
        .iter()
        .map(|a| (a.person.clone(), a.channel.as_str()))
        .collect();
    assert_eq!(
        who,
        [(Some("ana".into()), "feed"), (Some("ben".into()), "feed")]
    );
}

/// Many resolutions at once, with receipts read while they are being chained: every
/// resolution exactly once, in one unbroken chain.
pub async fn concurrent_resolutions_keep_the_chain_intact(srv: &TestServer) {
    concurrent(srv, &[srv]).await;
}

/// `concurrent_resolutions_keep_the_chain_intact` with the answers and reads spread over
/// `replicas` (of `first`'s database).
pub async fn concurrent(first: &TestServer, replicas: &[&TestServer]) {
    const N: usize = 30;
    let key = public_key(first).await;
    for r in replicas {
        assert_eq!(
            public_key(r).await,
            key,
            "every replica signs with the same key"
        );
    }
    let mut handles = Vec::new();
    for i in 0..N {
        handles.push(
            first
                .create(json!({"question": format!("chain {i}"), "kind": "bool"}))
                .await,
        );
    }
    let mut tasks = Vec::new();
    for (i, h) in handles.iter().enumerate() {
        let srv = replicas[i % replicas.len()];
        let client = srv.client.clone();
        let url = srv.person_url(s(h, "web_url")).await;
        let receipt_url = srv.url(&format!("/v1/decisions/{}/receipt", s(h, "decision_id")));
        let key = srv.key.clone();
        tasks.push(tokio::spawn(async move {
            let (status, body) = send(client.post(url).json(&json!({"value": i % 2 == 0}))).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            // Racing the background chainer (and the other replica's) for the same places.
            let (status, body) = send(client.get(receipt_url).bearer_auth(key)).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }));
    }
    let mut served: Vec<Value> = Vec::new();
    for t in tasks {
        served.push(t.await.unwrap());
    }
    let all = chain(first, 7).await;
    assert_eq!(all.len(), N);
    verify_chain(&all, &key).unwrap();
    let mut ids: Vec<String> = all
        .iter()
        .map(|r| r.receipt["decision_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), N, "each resolution exactly once");
    // What each request was served is the receipt in the chain.
    for got in served {
        let seq = got["receipt"]["seq"].as_u64().unwrap() as usize;
        assert_eq!(got["sha256"], all[seq - 1].sha256.as_str());
    }
}
