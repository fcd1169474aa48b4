use serde_json::json;
use time::macros::datetime;

use super::*;
use crate::domain::answered_by::AnswerChannel;
use crate::domain::new_decision::parse_new_decision;

fn decision(question: &str) -> Decision {
    let spec = parse_new_decision(&json!({
        "question": question,
        "kind": "choose",
        "options": ["Allow", "Deny"],
        "context_md": "**Tool:** `Bash`",
        "metadata": {"who": "the agent"},
    }))
    .unwrap()
    .spec;
    Decision {
        id: Uuid::now_v7(),
        inbox_id: Uuid::from_u128(7),
        spec,
        status: Status::Answered,
        outcome: Some(json!("Allow")),
        outcome_source: Some(OutcomeSource::Human),
        custom: false,
        remark: Some("ok".into()),
        created_at: datetime!(2026-11-27 10:00:00 UTC),
        expires_at: datetime!(2026-11-27 11:00:00 UTC),
        resolved_at: Some(datetime!(2026-11-27 10:01:00.250 UTC)),
        has_image: false,
        cancel_reason: None,
        answered_by: Some(AnsweredBy::new(AnswerChannel::Feed, None)),
        answers: vec![AnswerRecord {
            remark: Some("ok".into()),
            ..AnswerRecord::by_ana(json!("Allow"), datetime!(2026-11-27 10:01:00.250 UTC))
        }],
    }
}

fn key() -> ReceiptKey {
    ReceiptKey::from_stored(&ReceiptKey::generate()).unwrap()
}

/// A chain of `n` receipts of one inbox, each with what was asked.
fn chain(key: &ReceiptKey, n: u64) -> Vec<SignedReceipt> {
    let mut out: Vec<SignedReceipt> = Vec::new();
    for seq in 1..=n {
        let d = decision(&format!("question {seq}"));
        let asked = asked_document(&d.spec, None);
        let prev = out.last().map(|r| r.sha256.clone());
        let r = Receipt::of(
            &key.public().key_id(),
            seq,
            prev.as_deref(),
            &d,
            canonical_sha256(&asked),
            &[],
        );
        let mut signed = key.sign(&r);
        signed.asked = Some(asked);
        out.push(signed);
    }
    out
}

#[test]
fn a_signed_receipt_verifies_and_survives_a_round_trip_through_text() {
    let k = key();
    let signed = chain(&k, 1).remove(0);
    // Written out and read back with its keys in another order, it is the same receipt.
    let text = serde_json::to_string_pretty(&signed).unwrap();
    let back: SignedReceipt = serde_json::from_str(&text).unwrap();
    let v = verify(&back, k.public()).unwrap();
    assert_eq!(v.receipt.seq, 1);
    assert_eq!(v.receipt.outcome, Some(json!("Allow")));
    assert_eq!(v.receipt.answers[0].person.as_deref(), Some("ana"));
    assert_eq!(v.sha256, signed.sha256);
}

#[test]
fn the_same_receipt_is_signed_to_the_same_bytes() {
    // Ed25519 is deterministic: two replicas signing the same resolution write the same
    // receipt, whichever of them wins the race to store it.
    let stored = ReceiptKey::generate();
    let a = ReceiptKey::from_stored(&stored).unwrap();
    let b = ReceiptKey::from_stored(&stored).unwrap();
    let d = decision("q");
    let r = Receipt::of(&a.public().key_id(), 1, None, &d, "00".into(), &[]);
    assert_eq!(a.sign(&r), b.sign(&r));
    assert!(ReceiptKey::from_stored("not a key").is_err());
}

#[test]
fn what_was_asked_leaves_out_delivery_and_metadata_and_is_reproducible() {
    let d = decision("q");
    let asked = asked_document(&d.spec, None);
    assert_eq!(asked["question"], "q");
    assert!(asked.get("metadata").is_none() && asked.get("notify").is_none());
    assert_eq!(asked["body"]["kind"], "choose");
    // The spec stored and read back gives the same document.
    let stored: DecisionSpec =
        serde_json::from_str(&serde_json::to_string(&d.spec).unwrap()).unwrap();
    assert_eq!(
        canonical_sha256(&asked_document(&stored, None)),
        canonical_sha256(&asked)
    );
    let with_image = asked_document(&d.spec, Some("ab"));
    assert_ne!(canonical_sha256(&with_image), canonical_sha256(&asked));
}

#[test]
fn an_edited_command_comes_from_the_answered_event() {
    let d = decision("q");
    let events = vec![DecisionEvent {
        at: datetime!(2026-11-27 10:01:00 UTC),
        kind: crate::domain::EventKind::Answered,
        detail: json!({"edited_command": "ls -la"}),
    }];
    let r = Receipt::of("k", 1, None, &d, "00".into(), &events);
    assert_eq!(r.edited_command.as_deref(), Some("ls -la"));
}

#[test]
fn tampering_with_any_part_is_caught() {
    let k = key();
    let good = chain(&k, 1).remove(0);

    let mut outcome = good.clone();
    outcome.receipt["outcome"] = json!("Deny");
    assert!(matches!(
        verify(&outcome, k.public()),
        Err(ReceiptError::BadSignature { .. })
    ));

    let mut answers = good.clone();
    answers.receipt["answers"][0]["channel"] = json!("api");
    assert!(matches!(
        verify(&answers, k.public()),
        Err(ReceiptError::BadSignature { .. })
    ));

    let mut asked = good.clone();
    asked.asked.as_mut().unwrap()["question"] = json!("something else");
    let e = verify(&asked, k.public()).unwrap_err();
    assert!(matches!(e, ReceiptError::AskedMismatch { .. }), "{e}");

    let mut hash = good.clone();
    hash.sha256 = "0".repeat(64);
    assert!(matches!(
        verify(&hash, k.public()),
        Err(ReceiptError::HashMismatch { .. })
    ));

    let mut signature = good.clone();
    signature.signature = "%%".into();
    assert!(matches!(
        verify(&signature, k.public()),
        Err(ReceiptError::Malformed { .. })
    ));
}

#[test]
fn another_key_is_named_as_such() {
    let k = key();
    let other = key();
    let good = chain(&k, 1).remove(0);
    let e = verify(&good, other.public()).unwrap_err();
    assert!(matches!(e, ReceiptError::WrongKey { .. }), "{e}");
    assert!(e.to_string().contains("another key"), "{e}");
    // A receipt that claims the other key's id still fails on its signature.
    let mut claimed = good.clone();
    claimed.receipt["key_id"] = json!(other.public().key_id());
    assert!(matches!(
        verify(&claimed, other.public()),
        Err(ReceiptError::BadSignature { .. })
    ));
}

#[test]
fn a_chain_verifies_and_every_break_is_named_by_its_seq() {
    let k = key();
    let good = chain(&k, 4);
    let summary = verify_chain(&good, k.public()).unwrap().unwrap();
    assert_eq!((summary.first_seq, summary.last_seq), (1, 4));
    assert_eq!(summary.last_sha256, good[3].sha256);
    // A stretch from the middle checks out on its own.
    assert!(verify_chain(&good[2..], k.public()).is_ok());

    let mut dropped = good.clone();
    dropped.remove(2);
    let e = verify_chain(&dropped, k.public()).unwrap_err();
    assert_eq!(
        e,
        ReceiptError::BrokenChain {
            seq: 4,
            why: "it follows seq 2: receipts are missing or out of order".into()
        }
    );
    assert!(e.to_string().starts_with("broken chain at seq 4"), "{e}");

    let mut swapped = good.clone();
    swapped.swap(1, 2);
    assert!(matches!(
        verify_chain(&swapped, k.public()),
        Err(ReceiptError::BrokenChain { seq: 3, .. })
    ));

    // A receipt re-signed by the same key but linking to something else: the chain says
    // where.
    let d = decision("forged");
    let forged = Receipt::of(&k.public().key_id(), 3, Some("ff"), &d, "00".into(), &[]);
    let mut relinked = good.clone();
    relinked[2] = k.sign(&forged);
    let e = verify_chain(&relinked, k.public()).unwrap_err();
    assert!(matches!(e, ReceiptError::BrokenChain { seq: 3, .. }), "{e}");

    let first = Receipt::of(&k.public().key_id(), 1, Some("ff"), &d, "00".into(), &[]);
    assert!(matches!(
        verify_chain(&[k.sign(&first)], k.public()),
        Err(ReceiptError::BrokenChain { seq: 1, .. })
    ));
}

#[test]
fn public_keys_read_back_and_bad_ones_are_named() {
    let k = key();
    let text = k.public().to_text();
    assert_eq!(
        PublicKey::parse(&format!(" {text}\n")).unwrap(),
        *k.public()
    );
    assert_eq!(k.public().key_id().len(), 16);
    assert!(PublicKey::parse("abc").unwrap_err().contains("32 bytes"));
    assert!(PublicKey::parse("!!").unwrap_err().contains("base64url"));
}

/// The answered event of an Allow for 15 minutes given at `at`.
fn granted(at: OffsetDateTime) -> Vec<DecisionEvent> {
    let grant = crate::domain::allowance::Grant::new(
        crate::domain::allowance::AllowFor::Quarter,
        crate::domain::allowance::Scope {
            harness: "claude".into(),
            project: Some("shop".into()),
            tool_name: "Bash".into(),
            rule: None,
        },
        at,
        None,
    );
    vec![DecisionEvent {
        at,
        kind: crate::domain::EventKind::Answered,
        detail: json!({"action": "answer", "allowance": grant}),
    }]
}

#[test]
fn an_allowance_is_signed_with_its_length_end_and_scope() {
    let k = key();
    let d = decision("q");
    let r = Receipt::of("k", 1, None, &d, "00".into(), &granted(d.created_at));
    let a = r.allowance.clone().unwrap();
    assert_eq!(a.allow_for, "15m");
    assert_eq!(a.until, datetime!(2026-11-27 10:15:00 UTC));
    assert_eq!(a.scope.project.as_deref(), Some("shop"));
    let r = Receipt {
        key_id: k.public().key_id(),
        ..r
    };
    let signed = k.sign(&r);
    assert_eq!(signed.receipt["allowance"]["allow_for"], "15m");
    assert_eq!(
        verify(&signed, k.public()).unwrap().receipt.allowance,
        Some(a)
    );

    // Every part is covered by the signature.
    for (part, value) in [
        ("until", json!("2026-11-27T12:15:00Z")),
        ("allow_for", json!("60m")),
        (
            "scope",
            json!({"harness": "claude", "project": null, "tool_name": "Bash",
                          "rule": null}),
        ),
    ] {
        let mut changed = signed.clone();
        changed.receipt["allowance"][part] = value;
        let e = verify(&changed, k.public()).unwrap_err();
        assert!(
            matches!(e, ReceiptError::BadSignature { .. }),
            "{part}: {e}"
        );
        assert!(
            e.to_string().starts_with("receipt seq 1: bad signature"),
            "{e}"
        );
    }

    // A receipt without one (all those written before) has no such field at all.
    let plain = k.sign(&Receipt {
        allowance: None,
        ..r.clone()
    });
    assert!(plain.receipt.get("allowance").is_none());
    assert!(verify(&plain, k.public()).is_ok());
}

#[test]
fn a_signed_allowance_that_cannot_be_is_named() {
    let k = key();
    let mut d = decision("q");
    let events = granted(d.created_at);
    // Only an Allow grants one.
    d.outcome = Some(json!("Deny"));
    let r = Receipt::of(&k.public().key_id(), 3, None, &d, "00".into(), &events);
    let e = verify(&k.sign(&r), k.public()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "receipt seq 3: it signs an allowance, but not for an Allow"
    );
    // Its end must be within its length of the Allow.
    d.outcome = Some(json!("Allow"));
    let mut r = Receipt::of(&k.public().key_id(), 3, None, &d, "00".into(), &events);
    r.allowance.as_mut().unwrap().until = d.resolved_at.unwrap() + time::Duration::hours(2);
    let e = verify(&k.sign(&r), k.public()).unwrap_err();
    assert!(matches!(e, ReceiptError::Inconsistent { .. }), "{e}");
    assert!(
        e.to_string().contains("which that length does not reach"),
        "{e}"
    );
    r.allowance.as_mut().unwrap().allow_for = "1d".into();
    let e = verify(&k.sign(&r), k.public()).unwrap_err();
    assert!(
        e.to_string().contains("not one of 15m, 60m, morning"),
        "{e}"
    );
}
