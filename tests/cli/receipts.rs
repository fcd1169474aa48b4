//! `sayso receipts` and `sayso verify`: a chain exported and checked offline.

use super::*;

/// `sayso verify` on `text` (stdin when `file` is `-`) with `flags`.
async fn verify(base: &str, file: &str, text: Option<&str>, flags: &[&str]) -> Output {
    let mut args = vec!["verify", file];
    args.extend_from_slice(flags);
    let mut cmd = client(base, None, &args);
    cmd.env_remove("SAYSO_RECEIPT_KEY");
    output_with_input(cmd, text.unwrap_or_default()).await
}

/// `sayso receipts` exports the inbox's chain and `sayso verify` checks it offline: a good
/// chain and a single receipt pass; a changed receipt, another key and a dropped receipt
/// are each named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipts_are_exported_and_verified_offline() {
    let (_db, srv) = fresh_server().await;
    let mut ids = Vec::new();
    for (i, yes) in [true, false, true].into_iter().enumerate() {
        let h = srv
            .create(json!({"question": format!("receipt {i}"), "kind": "bool"}))
            .await;
        srv.answer_ok(s(&h, "web_url"), json!({"value": yes})).await;
        ids.push(s(&h, "decision_id").to_string());
    }
    let out = run(&srv, &["receipts", "--public-key"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = run(&srv, &["receipts"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let chain = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(chain.lines().count(), 3, "{chain}");

    let dir = std::env::temp_dir().join(format!("sayso-receipts-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let good = file("chain.jsonl", &chain);
    let key_file = file("key.pub", &format!("{key}\n"));

    let out = verify(&srv.base, &good, None, &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("ok: 3 receipts of inbox"), "{said}");
    assert!(said.contains("seq 1 to 3, unbroken"), "{said}");
    let out = verify(&srv.base, &good, None, &["--key-file", &key_file]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // One decision's receipt, with what was asked, through stdin.
    let out = run(&srv, &["receipts", "--decision", &ids[1]]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let one = String::from_utf8_lossy(&out.stdout).into_owned();
    let out = verify(&srv.base, "-", Some(&one), &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("receipt 2 of decision {}", ids[1])),
        "{said}"
    );
    assert!(said.contains("what was asked matches"), "{said}");

    // What was asked, changed: named.
    let mut asked: Value = serde_json::from_str(&one).unwrap();
    asked["asked"]["question"] = json!("something else");
    let out = verify(&srv.base, "-", Some(&asked.to_string()), &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("receipt seq 2: what was asked does not hash"),
        "{out:?}"
    );

    // A receipt changed after signing: a bad signature, at its seq.
    let mut lines: Vec<Value> = chain
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut tampered = lines.clone();
    tampered[1]["receipt"]["outcome"] = json!(true);
    let text: Vec<String> = tampered.iter().map(Value::to_string).collect();
    let bad = file("tampered.jsonl", &text.join("\n"));
    let out = verify(&srv.base, &bad, None, &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stderr(&out).contains("receipt seq 2: bad signature"),
        "{out:?}"
    );

    // Another key: named as such, with both key ids.
    let other = sayso::domain::receipt::ReceiptKey::from_stored(
        &sayso::domain::receipt::ReceiptKey::generate(),
    )
    .unwrap()
    .public()
    .to_text();
    let out = verify(&srv.base, &good, None, &["--key", &other]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("signed with another key"), "{out:?}");

    // A receipt dropped from the middle: the chain breaks where it is missed.
    lines.remove(1);
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let broken = file("broken.jsonl", &text.join("\n"));
    let out = verify(&srv.base, &broken, None, &["--key", &key]).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr(&out).contains("broken chain at seq 3"), "{out:?}");

    // No key at all: said, with where to get one.
    let out = verify(&srv.base, &good, None, &[]).await;
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(stderr(&out).contains("--key"), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
    srv.stop().await;
}
