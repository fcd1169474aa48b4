//! Receipts: what the server signs when a decision resolves, so anyone holding its public key
//! can check, offline, what was asked, what was answered, by whom and through which channel,
//! and that nothing of an inbox's history was dropped or rewritten since.
//!
//! A receipt is a JSON object (`Receipt`) signed with Ed25519 over its canonical text
//! (`canonical.rs`). It names the decision, the SHA-256 of what the person was shown (`asked`,
//! below), the resolution with every answer, and its place in its inbox's chain: its `seq`
//! (1, 2, …) and the SHA-256 of the previous receipt's canonical text (`prev_sha256`, null
//! for the first). Changing, dropping or reordering one receipt breaks the next one's link.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::allowance::Grant;
use super::answered_by::AnsweredBy;
use super::canonical::{canonical_json, canonical_sha256};
use super::kind::{OutcomeSource, Status};
use super::people::AnswerRecord;
use super::spec::DecisionSpec;
use super::{Decision, DecisionEvent};

/// The receipt format this server writes and `sayso verify` reads.
pub const RECEIPT_VERSION: u32 = 1;

/// What the person was shown: the decision as created, without what only steers delivery
/// (`notify`, `callback_url`, `completion`, the people's `urgent`, which the server may also turn off) or
/// what only the asker reads (`metadata`). An image counts by its SHA-256. Built from the
/// validated spec, so a client that holds its create request gets the same document by
/// validating it the same way (`new_decision::parse_new_decision`).
pub fn asked_document(spec: &DecisionSpec, image_sha256: Option<&str>) -> Value {
    let mut doc = serde_json::to_value(spec).unwrap_or(Value::Null);
    if let Some(m) = doc.as_object_mut() {
        for delivery in ["notify", "callback_url", "completion", "metadata"] {
            m.remove(delivery);
        }
        if let Some(routing) = m.get_mut("routing").and_then(Value::as_object_mut) {
            routing.remove("urgent");
        }
        if let Some(h) = image_sha256 {
            m.insert("image_sha256".into(), Value::from(h));
        }
    }
    doc
}

/// The signed part of a receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Receipt {
    /// `1`.
    pub version: u32,
    /// Which key signed it: the first 16 hex digits of the SHA-256 of the public key.
    pub key_id: String,
    pub inbox_id: Uuid,
    /// Its place in the inbox's chain, from 1.
    pub seq: u64,
    /// The `sha256` of the receipt before it in the chain; null for the first.
    pub prev_sha256: Option<String>,
    pub decision_id: Uuid,
    /// SHA-256 (hex) of the canonical text of what the person was shown (`asked`).
    pub asked_sha256: String,
    /// `answered`, `declined`, `expired` or `cancelled`.
    #[schema(value_type = String)]
    pub status: Status,
    pub outcome: Option<Value>,
    #[schema(value_type = Option<String>)]
    pub outcome_source: Option<OutcomeSource>,
    pub custom: bool,
    pub remark: Option<String>,
    /// A tool approval allowed with its command edited: the command that runs.
    pub edited_command: Option<String>,
    /// Which way it was resolved (and on which bound device).
    pub answered_by: Option<AnsweredBy>,
    /// Every answer given, in order: several for a rule of several people.
    pub answers: Vec<AnswerRecord>,
    /// The person's Allow "for a while": the allowance it made (its length, end and scope).
    /// Absent on every other receipt, and on those written before receipts carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowance: Option<Grant>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub resolved_at: OffsetDateTime,
}

impl Receipt {
    /// The receipt of a resolved decision, at `seq` after the receipt whose hash is `prev`.
    pub fn of(
        key_id: &str,
        seq: u64,
        prev: Option<&str>,
        decision: &Decision,
        asked_sha256: String,
        events: &[DecisionEvent],
    ) -> Receipt {
        let edited_command = events
            .iter()
            .rev()
            .find_map(|e| e.detail["edited_command"].as_str())
            .map(str::to_string);
        let allowance = events
            .iter()
            .rev()
            .find_map(|e| serde_json::from_value(e.detail.get("allowance")?.clone()).ok());
        Receipt {
            version: RECEIPT_VERSION,
            key_id: key_id.to_string(),
            inbox_id: decision.inbox_id,
            seq,
            prev_sha256: prev.map(str::to_string),
            decision_id: decision.id,
            asked_sha256,
            status: decision.status,
            outcome: decision.outcome.clone(),
            outcome_source: decision.outcome_source,
            custom: decision.custom,
            remark: decision.remark.clone(),
            edited_command,
            answered_by: decision.answered_by,
            answers: decision.answers.clone(),
            allowance,
            created_at: decision.created_at,
            resolved_at: decision.resolved_at.unwrap_or(decision.expires_at),
        }
    }
}

/// A receipt as served, exported and verified: the signed object, its signature, its hash
/// (what the next receipt's `prev_sha256` holds) and, when served for one decision, what was
/// asked (whose hash the receipt signs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SignedReceipt {
    /// The signed object; its canonical text is what the signature covers.
    #[schema(value_type = Receipt)]
    pub receipt: Value,
    /// Ed25519 signature over the canonical text of `receipt`, base64url without padding.
    pub signature: String,
    /// SHA-256 (hex) of the canonical text of `receipt`.
    pub sha256: String,
    /// What the person was shown; its canonical SHA-256 is the receipt's `asked_sha256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub asked: Option<Value>,
}

/// The server's signing key.
pub struct ReceiptKey {
    pair: Ed25519KeyPair,
    public: PublicKey,
}

impl ReceiptKey {
    /// A new private key as stored: a 32-byte Ed25519 seed, base64url.
    pub fn generate() -> String {
        let mut seed = [0u8; 32];
        // Without an OS random source no key can be made safely: stopping is the only answer.
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut seed)
            .expect("the operating system's random source failed");
        URL_SAFE_NO_PAD.encode(seed)
    }

    pub fn from_stored(stored: &str) -> Result<Self, String> {
        let malformed = || "the stored receipt signing key is malformed".to_string();
        let seed = URL_SAFE_NO_PAD
            .decode(stored.trim())
            .map_err(|_| malformed())?;
        let pair = Ed25519KeyPair::from_seed_unchecked(&seed).map_err(|_| malformed())?;
        let bytes: [u8; 32] = pair
            .public_key()
            .as_ref()
            .try_into()
            .map_err(|_| malformed())?;
        Ok(ReceiptKey {
            pair,
            public: PublicKey(bytes),
        })
    }

    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// Signs `receipt`.
    pub fn sign(&self, receipt: &Receipt) -> SignedReceipt {
        let value = serde_json::to_value(receipt).unwrap_or(Value::Null);
        let text = canonical_json(&value);
        let signature = URL_SAFE_NO_PAD.encode(self.pair.sign(text.as_bytes()).as_ref());
        SignedReceipt {
            sha256: canonical_sha256(&value),
            receipt: value,
            signature,
            asked: None,
        }
    }
}

/// An Ed25519 public key: 32 bytes, written base64url without padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey([u8; 32]);

impl PublicKey {
    /// Reads a key as `GET /v1/receipts/key` gives it (`public_key`), surrounding blanks
    /// ignored.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| {
            format!("{text:?} is not a receipt key: expected 43 base64url characters")
        })?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| {
            format!("{text:?} is not a receipt key: an Ed25519 public key is 32 bytes")
        })?;
        Ok(PublicKey(bytes))
    }

    pub fn to_text(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.0)
    }

    /// The first 16 hex digits of the key's SHA-256: what a receipt names its key by.
    pub fn key_id(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(self.0)[..8])
    }
}

/// What is wrong with a receipt or a chain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReceiptError {
    #[error("receipt {at}: not a receipt: {why}")]
    Malformed { at: String, why: String },
    #[error(
        "receipt {at}: signed with another key (key id {found}); the key given has key id {expected}"
    )]
    WrongKey {
        at: String,
        found: String,
        expected: String,
    },
    #[error("receipt {at}: bad signature: the receipt was changed or not signed by this key")]
    BadSignature { at: String },
    #[error("receipt {at}: its sha256 is not the hash of its content")]
    HashMismatch { at: String },
    #[error("receipt {at}: what was asked does not hash to its asked_sha256")]
    AskedMismatch { at: String },
    #[error("receipt {at}: {why}")]
    Inconsistent { at: String, why: String },
    #[error("broken chain at seq {seq}: {why}")]
    BrokenChain { seq: u64, why: String },
}

/// A receipt whose signature checked out.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub receipt: Receipt,
    pub sha256: String,
}

/// Checks one receipt's signature against `key`, its hash, and (when it comes with it) that
/// what was asked hashes to its `asked_sha256`.
pub fn verify(signed: &SignedReceipt, key: &PublicKey) -> Result<Verified, ReceiptError> {
    let at = signed.receipt["seq"]
        .as_u64()
        .map_or_else(|| "without a seq".to_string(), |s| format!("seq {s}"));
    let malformed = |why: String| ReceiptError::Malformed {
        at: at.clone(),
        why,
    };
    let receipt: Receipt =
        serde_json::from_value(signed.receipt.clone()).map_err(|e| malformed(e.to_string()))?;
    if receipt.version != RECEIPT_VERSION {
        return Err(malformed(format!(
            "version {} (this sayso reads version {RECEIPT_VERSION})",
            receipt.version
        )));
    }
    if receipt.key_id != key.key_id() {
        return Err(ReceiptError::WrongKey {
            at,
            found: receipt.key_id,
            expected: key.key_id(),
        });
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signed.signature.trim())
        .map_err(|_| malformed("its signature is not base64url".into()))?;
    // The bytes signed are those of the object as received, not as this version would write
    // it: a field added by a newer server is covered too.
    let text = canonical_json(&signed.receipt);
    UnparsedPublicKey::new(&ED25519, key.0)
        .verify(text.as_bytes(), &signature)
        .map_err(|_| ReceiptError::BadSignature { at: at.clone() })?;
    let sha256 = canonical_sha256(&signed.receipt);
    if signed.sha256 != sha256 {
        return Err(ReceiptError::HashMismatch { at });
    }
    if let Some(asked) = &signed.asked
        && canonical_sha256(asked) != receipt.asked_sha256
    {
        return Err(ReceiptError::AskedMismatch { at });
    }
    if let Some(why) = receipt
        .allowance
        .as_ref()
        .and_then(|a| bad_allowance(&receipt, a))
    {
        return Err(ReceiptError::Inconsistent { at, why });
    }
    Ok(Verified { receipt, sha256 })
}

/// What is wrong with a signed allowance, if anything: only the person's Allow makes one,
/// of a length this build knows, ending after the Allow and no later than that length.
fn bad_allowance(r: &Receipt, a: &Grant) -> Option<String> {
    let allowed = r.status == Status::Answered && r.outcome.as_ref() == Some(&Value::from("Allow"));
    if !allowed {
        return Some("it signs an allowance, but not for an Allow".into());
    }
    let Some(longest) = a.longest() else {
        return Some(format!(
            "its allowance is for {:?}, not one of {}",
            a.allow_for,
            super::allowance::AllowFor::NAMES.join(", ")
        ));
    };
    if a.until <= r.resolved_at || a.until > r.resolved_at + longest {
        return Some(format!(
            "its allowance \"{}\" ends at {}, which that length does not reach from the Allow",
            a.allow_for, a.until
        ));
    }
    None
}

/// What a chain that checks out holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSummary {
    pub inbox_id: Uuid,
    pub first_seq: u64,
    pub last_seq: u64,
    /// The `sha256` of the last receipt: where the next export continues from.
    pub last_sha256: String,
}

/// Checks each receipt and that they form one unbroken stretch of one inbox's chain: the
/// same inbox, consecutive `seq`, each naming the one before it. A stretch that starts at
/// seq 1 must name no predecessor; one that starts later is taken from its first receipt on.
pub fn verify_chain(
    receipts: &[SignedReceipt],
    key: &PublicKey,
) -> Result<Option<ChainSummary>, ReceiptError> {
    let mut last: Option<Verified> = None;
    let mut first_seq = 0;
    for signed in receipts {
        let this = verify(signed, key)?;
        let seq = this.receipt.seq;
        match &last {
            None => {
                first_seq = seq;
                if seq == 0 {
                    return Err(ReceiptError::BrokenChain {
                        seq,
                        why: "a chain starts at seq 1".into(),
                    });
                }
                if seq == 1 && this.receipt.prev_sha256.is_some() {
                    return Err(ReceiptError::BrokenChain {
                        seq,
                        why: "the first receipt names a previous one".into(),
                    });
                }
            }
            Some(prev) => {
                if this.receipt.inbox_id != prev.receipt.inbox_id {
                    return Err(ReceiptError::BrokenChain {
                        seq,
                        why: format!(
                            "it belongs to inbox {}, the receipts before it to inbox {}",
                            this.receipt.inbox_id, prev.receipt.inbox_id
                        ),
                    });
                }
                if seq != prev.receipt.seq + 1 {
                    return Err(ReceiptError::BrokenChain {
                        seq,
                        why: format!(
                            "it follows seq {}: receipts are missing or out of order",
                            prev.receipt.seq
                        ),
                    });
                }
                if this.receipt.prev_sha256.as_deref() != Some(prev.sha256.as_str()) {
                    return Err(ReceiptError::BrokenChain {
                        seq,
                        why: format!(
                            "its prev_sha256 is not the sha256 of seq {} ({})",
                            prev.receipt.seq, prev.sha256
                        ),
                    });
                }
            }
        }
        last = Some(this);
    }
    Ok(last.map(|l| ChainSummary {
        inbox_id: l.receipt.inbox_id,
        first_seq,
        last_seq: l.receipt.seq,
        last_sha256: l.sha256,
    }))
}

#[cfg(test)]
mod tests;
