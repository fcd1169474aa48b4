//! The receipt behind an Allow. With a pinned receipt key (pins.rs), the hook allows a call
//! only on a receipt that key signed, for the decision it waited on, whose `asked_sha256` is
//! the hash of the very question this hook put: so something between the hook and sayso (a
//! proxy, a server impostor, a rewritten answer) cannot turn a Deny, a question never asked
//! or another call's Allow into an Allow here. What the hook then acts on (the outcome, the
//! remark, an edited command) is read from the receipt, not from the unsigned decision.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::client::http::{Api, Failure};
use crate::domain::canonical::canonical_sha256;
use crate::domain::new_decision::parse_new_decision;
use crate::domain::receipt::{PublicKey, Receipt, SignedReceipt, asked_document, verify};

/// How long one read of the receipt may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The pause before asking again for a receipt that is being chained.
const NOT_READY_PAUSE: Duration = Duration::from_millis(200);

/// The hash a receipt must carry for the question the hook created with `body`: what the
/// server stores is this same request, validated the same way.
pub fn asked_sha256(body: &Value) -> Option<String> {
    parse_new_decision(body)
        .ok()
        .map(|new| canonical_sha256(&asked_document(&new.spec, None)))
}

/// A receipt that checked out, with what was asked when the server sent it.
pub struct Checked {
    pub receipt: Receipt,
    pub asked: Option<Value>,
}

impl Checked {
    /// The decision as the receipt tells it, in the shape the verdict is read from.
    pub fn as_decision(&self) -> Value {
        let asked = |k: &str| self.asked.as_ref().map_or(Value::Null, |a| a[k].clone());
        let approval = asked("approval");
        json!({
            "project": asked("project"),
            "status": self.receipt.status,
            "outcome": self.receipt.outcome,
            "remark": self.receipt.remark,
            "answered_by": self.receipt.answered_by,
            "step_up": approval["step_up"],
            "approval": approval,
        })
    }
}

/// The receipt of decision `id`, signed by `key`; with `asked`, it must be for exactly that
/// question. `Err` says, in one line, why it cannot be trusted.
pub async fn checked(
    api: &Api,
    id: &str,
    key: &PublicKey,
    asked: Option<&str>,
    give_up_at: Instant,
) -> Result<Checked, String> {
    let signed = fetch(api, id, give_up_at).await?;
    let v = verify(&signed, key).map_err(|e| format!("the receipt does not check out: {e}"))?;
    if v.receipt.decision_id.to_string() != id {
        return Err(format!(
            "the receipt is for decision {}, not {id}",
            v.receipt.decision_id
        ));
    }
    if let Some(expected) = asked
        && v.receipt.asked_sha256 != expected
    {
        return Err("the receipt is for another question than the one this hook asked".to_string());
    }
    Ok(Checked {
        receipt: v.receipt,
        asked: signed.asked,
    })
}

/// `GET /v1/decisions/{id}/receipt`, again while the server says it is being chained.
async fn fetch(api: &Api, id: &str, give_up_at: Instant) -> Result<SignedReceipt, String> {
    let url = api.url(&["v1", "decisions", id, "receipt"]);
    loop {
        let got = api
            .send(
                || api.request(Method::GET, url.clone(), REQUEST_TIMEOUT),
                give_up_at,
            )
            .await;
        match got {
            Ok(v) => {
                return serde_json::from_value(v)
                    .map_err(|e| format!("the server sent no receipt: {e}"));
            }
            Err(Failure::Refused { code, .. })
                if code == "receipt_not_ready" && Instant::now() + NOT_READY_PAUSE < give_up_at =>
            {
                tokio::time::sleep(NOT_READY_PAUSE).await;
            }
            Err(e) => {
                return Err(format!(
                    "no receipt: {}",
                    e.to_string().lines().next().unwrap_or_default()
                ));
            }
        }
    }
}
