use serde_json::json;
use time::macros::datetime;
use uuid::Uuid;

use super::*;
use crate::domain::allowance::{AllowFor, Grant};
use crate::domain::answered_by::AnsweredBy;
use crate::domain::kind::{OutcomeSource, Status};
use crate::domain::people::AnswerRecord;
use crate::domain::receipt::{RECEIPT_VERSION, Receipt};

const AT: OffsetDateTime = datetime!(2026-11-27 13:00 UTC);

fn scope() -> Scope {
    Scope {
        harness: "claude".into(),
        project: Some("shop".into()),
        tool_name: "Bash".into(),
        rule: None,
    }
}

/// The receipt of the person's Allow from their feed, granting `grant`.
fn receipt(grant: Option<Grant>) -> Receipt {
    Receipt {
        version: RECEIPT_VERSION,
        key_id: "0011223344556677".into(),
        inbox_id: Uuid::nil(),
        seq: 4,
        prev_sha256: None,
        decision_id: Uuid::nil(),
        asked_sha256: "00".into(),
        status: Status::Answered,
        outcome: Some(json!("Allow")),
        outcome_source: Some(OutcomeSource::Human),
        custom: false,
        remark: None,
        edited_command: None,
        answered_by: Some(AnsweredBy::new(AnswerChannel::Feed, None)),
        answers: vec![AnswerRecord::by_ana(json!("Allow"), AT)],
        allowance: grant,
        created_at: AT,
        resolved_at: AT,
    }
}

fn checked(r: Receipt) -> Result<Checked, String> {
    Ok(Checked {
        receipt: r,
        asked: None,
    })
}

fn grant() -> Grant {
    Grant::new(AllowFor::Quarter, scope(), AT, None)
}

#[test]
fn the_signed_allowance_counts_as_signed() {
    let g = grant();
    let now = AT + time::Duration::minutes(5);
    assert_eq!(
        signed_allowance(checked(receipt(Some(g.clone()))), &scope(), g.until, now),
        Ok("ana".to_string())
    );
}

#[test]
fn a_plain_allow_is_no_allowance() {
    let until = AT + time::Duration::hours(2);
    let why = signed_allowance(checked(receipt(None)), &scope(), until, AT).unwrap_err();
    assert_eq!(why, "the receipt of its Allow signs no allowance");
}

#[test]
fn a_stretched_widened_or_ended_allowance_does_not_count() {
    let g = grant();
    let now = AT + time::Duration::minutes(5);
    let r = || checked(receipt(Some(g.clone())));
    let later = g.until + time::Duration::hours(3);
    let why = signed_allowance(r(), &scope(), later, now).unwrap_err();
    assert!(why.starts_with("it is listed as ending at"), "{why}");
    let other = Scope {
        project: Some("bank".into()),
        ..scope()
    };
    let why = signed_allowance(r(), &other, g.until, now).unwrap_err();
    assert!(why.contains("other calls"), "{why}");
    let why = signed_allowance(r(), &scope(), g.until, g.until).unwrap_err();
    assert!(why.starts_with("its receipt says it ended at"), "{why}");
}

#[test]
fn only_the_persons_allow_grants() {
    let g = grant();
    let mut denied = receipt(Some(g.clone()));
    denied.outcome = Some(json!("Deny"));
    let why = signed_allowance(checked(denied), &scope(), g.until, AT).unwrap_err();
    assert_eq!(why, "its receipt is not the person's Allow");
    let mut by_link = receipt(Some(g.clone()));
    by_link.answered_by = Some(AnsweredBy::new(AnswerChannel::Link, None));
    assert!(signed_allowance(checked(by_link), &scope(), g.until, AT).is_err());
    let no_receipt = Err("no receipt: refused".to_string());
    assert_eq!(
        signed_allowance(no_receipt, &scope(), g.until, AT),
        Err("no receipt: refused".to_string())
    );
}
