//! Receipts (docs/SECURITY.md, Receipts): each resolution signed with the server's receipt
//! key and chained per inbox.
//!
//! Why a chainer after the fact, not a receipt written in the resolution's transaction: the
//! resolution path is the one the person waits on, and both stores write resolutions in
//! groups (storage/*/resolves.rs), several inboxes to a transaction; locking each inbox's
//! chain head there and signing inside it would serialise answers to one inbox behind each
//! other and lengthen every group. Instead the chain follows the inbox's resolution events,
//! whose ids become visible in increasing order per inbox (the same guarantee `/v1/events`
//! rests on), so "the resolutions after the head's event id, in id order" is one total order
//! that every replica reads alike. Each receipt is appended at the head's `seq + 1` or not at
//! all (the table's primary key): when two writers race (two replicas, or a request and this
//! replica's background chainer), one writes and the other reads the new head and goes on
//! after it. Ed25519 signatures are deterministic and a receipt holds only what is stored,
//! so whichever wins, the receipt is the same bytes.
//!
//! A receipt is made right after the resolution on the replica that resolved it (a message
//! to the background chainer, which costs the resolution nothing), and on demand: reading a
//! receipt or the chain first chains whatever its inbox has not yet, so a resolution whose
//! replica stopped before chaining it (or one the expiry sweep made) is chained by the next
//! reader or the next resolution of its inbox.

use std::collections::HashSet;

use tokio::sync::mpsc;
use uuid::Uuid;

use super::{Service, ServiceError};
use crate::domain::canonical::{canonical_json, canonical_sha256};
use crate::domain::inbox::Inbox;
use crate::domain::receipt::{PublicKey, Receipt, ReceiptKey, SignedReceipt, asked_document};
use crate::domain::{Decision, Status};
use crate::storage::{StoreError, StoredReceipt};

/// The setting that holds the receipt signing key (an Ed25519 seed, base64url).
pub const RECEIPT_KEY_SETTING: &str = "receipt_signing_key";

/// How many resolutions one pass of the chainer reads.
const BATCH: u32 = 100;
/// The most receipts one read of the chain returns.
pub const MAX_RECEIPTS_PAGE: u32 = 500;

/// The server's receipt key, made and stored on first use: every replica on the database
/// reads the same one, and a restart keeps it.
async fn receipt_key(store: &dyn crate::storage::Store) -> Result<ReceiptKey, StoreError> {
    let stored = store
        .setting_or_init(RECEIPT_KEY_SETTING, &ReceiptKey::generate())
        .await?;
    ReceiptKey::from_stored(&stored).map_err(StoreError::Other)
}

/// Where resolutions are handed to the background chainer: the inbox to chain.
pub(super) type ChainQueue = mpsc::UnboundedSender<Uuid>;

/// The queue, and its other end for `start_background`.
pub(super) fn chain_queue() -> (ChainQueue, mpsc::UnboundedReceiver<Uuid>) {
    mpsc::unbounded_channel()
}

/// The background chainer: chains each inbox a resolution here was made in, inboxes that
/// came in together once each.
pub(super) async fn chainer(svc: Service, mut inboxes: mpsc::UnboundedReceiver<Uuid>) {
    let mut batch = Vec::new();
    while inboxes.recv_many(&mut batch, 256).await > 0 {
        let distinct: HashSet<Uuid> = batch.drain(..).collect();
        for inbox in distinct {
            if let Err(error) = svc.chain_inbox(inbox).await {
                // The next resolution of the inbox, or the next read of a receipt, catches up.
                tracing::warn!(%inbox, %error, "receipts: could not chain");
            }
        }
    }
}

impl Service {
    /// The receipt key, read (or made) once per process.
    async fn receipt_key(&self) -> Result<&ReceiptKey, ServiceError> {
        Ok(self
            .inner
            .receipt_key
            .get_or_try_init(|| receipt_key(self.store().as_ref()))
            .await?)
    }

    /// The public half of the receipt key.
    pub async fn receipt_public_key(&self) -> Result<PublicKey, ServiceError> {
        Ok(*self.receipt_key().await?.public())
    }

    /// Hands a resolution's inbox to the background chainer.
    pub(super) fn chain_later(&self, inbox: Uuid) {
        // Without a chainer running (a command that is not `serve`), reads chain on demand.
        let _ = self.inner.chain_queue.send(inbox);
    }

    /// Chains every resolution of the inbox after its chain's head.
    pub async fn chain_inbox(&self, inbox: Uuid) -> Result<(), ServiceError> {
        let key = self.receipt_key().await?;
        let key_id = key.public().key_id();
        'from_head: loop {
            let head = self.store().receipt_head(inbox).await?;
            let (mut seq, mut prev, after) = match &head {
                Some(h) => (h.seq, Some(h.sha256.clone()), h.event_id),
                None => (0, None, 0),
            };
            let rows = self.store().resolutions_since(inbox, after, BATCH).await?;
            let full = rows.len() as u32 == BATCH;
            for (event_id, decision_id) in rows {
                let Some(d) = self.store().decision(Some(inbox), decision_id).await? else {
                    // Deleted (retention) between the two reads, with its event: the next
                    // pass no longer sees it.
                    continue 'from_head;
                };
                let asked = self.asked(&d).await?;
                // An approval's events hold an edited command and an allowance granted.
                let allowed = d.outcome.as_ref().and_then(|v| v.as_str())
                    == Some(crate::domain::approval::ALLOW);
                let events = if d.spec.approval.is_some() && (d.custom || allowed) {
                    self.store().events(d.id).await?
                } else {
                    Vec::new()
                };
                let receipt = Receipt::of(
                    &key_id,
                    (seq + 1) as u64,
                    prev.as_deref(),
                    &d,
                    canonical_sha256(&asked),
                    &events,
                );
                let signed = key.sign(&receipt);
                let row = StoredReceipt {
                    inbox_id: inbox,
                    seq: seq + 1,
                    decision_id,
                    event_id,
                    receipt: canonical_json(&signed.receipt),
                    signature: signed.signature,
                    sha256: signed.sha256,
                };
                if !self.store().append_receipt(&row).await? {
                    let moved = self.store().receipt_head(inbox).await?;
                    if moved.is_none_or(|h| h.seq <= seq) {
                        // The place is free, so the decision has a receipt elsewhere in the
                        // chain, which the event order rules out. Stop rather than spin.
                        return Err(ServiceError::Internal(format!(
                            "receipts: decision {decision_id} already has a receipt out of order"
                        )));
                    }
                    // Another writer chained first: go on after its receipts.
                    continue 'from_head;
                }
                seq = row.seq;
                prev = Some(row.sha256);
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// What the person was shown, as the receipt hashes it.
    async fn asked(&self, d: &Decision) -> Result<serde_json::Value, ServiceError> {
        let image = if d.has_image {
            self.store()
                .image(d.id)
                .await?
                .map(|(_, bytes)| crate::service::tokens::sha256_hex(&bytes))
        } else {
            None
        };
        Ok(asked_document(&d.spec, image.as_deref()))
    }

    /// The receipt of a decision of the inbox, with what was asked. Not one while it is
    /// pending; a resolution not chained yet is chained now.
    pub async fn decision_receipt(
        &self,
        inbox: &Inbox,
        id: Uuid,
    ) -> Result<SignedReceipt, ServiceError> {
        let stored = match self.store().receipt(inbox.id, id).await? {
            Some(r) => r,
            None => {
                // Expired first if its time is up, so it gets its receipt now.
                let d = self.get_decision(inbox, id).await?;
                if d.status == Status::Pending {
                    return Err(ServiceError::ReceiptNotReady { pending: true });
                }
                self.chain_inbox(inbox.id).await?;
                self.store()
                    .receipt(inbox.id, id)
                    .await?
                    .ok_or(ServiceError::ReceiptNotReady { pending: false })?
            }
        };
        let mut signed = served(&stored)?;
        // A decision past retention keeps its receipt, without what was asked.
        if let Some(d) = self.store().decision(Some(inbox.id), id).await? {
            signed.asked = Some(self.asked(&d).await?);
        }
        Ok(signed)
    }

    /// The inbox's chain from `from_seq` on, at most `limit` receipts, everything resolved
    /// so far chained first.
    pub async fn receipts(
        &self,
        inbox: &Inbox,
        from_seq: u64,
        limit: u32,
    ) -> Result<Vec<SignedReceipt>, ServiceError> {
        self.chain_inbox(inbox.id).await?;
        let from = i64::try_from(from_seq.max(1)).unwrap_or(i64::MAX);
        self.store()
            .receipts(inbox.id, from, limit.clamp(1, MAX_RECEIPTS_PAGE))
            .await?
            .iter()
            .map(served)
            .collect()
    }
}

/// A stored receipt as served.
fn served(r: &StoredReceipt) -> Result<SignedReceipt, ServiceError> {
    let receipt = serde_json::from_str(&r.receipt).map_err(|e| {
        ServiceError::Internal(format!("receipt {} of inbox {}: {e}", r.seq, r.inbox_id))
    })?;
    Ok(SignedReceipt {
        receipt,
        signature: r.signature.clone(),
        sha256: r.sha256.clone(),
        asked: None,
    })
}
