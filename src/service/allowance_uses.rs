//! The calls standing allowances let through (`domain::allowance::uses`): recorded by the
//! hook with the inbox's key before each call runs, read back by the key (`sayso list
//! --allowed-by`), shown to the person under their allowance and on the approval that made
//! it. The key can add a use only to a live allowance of its own inbox, of exactly its
//! scope, and nothing here edits or deletes one.

use time::OffsetDateTime;
use uuid::Uuid;

use super::{Service, ServiceError};
use crate::domain::allowance::uses::{AllowanceUse, UsedCall};
use crate::domain::allowance::{Allowance, Grant};
use crate::domain::inbox::Inbox;
use crate::domain::{Decision, EventKind};

/// The most calls one allowance lets through: past them each call is asked again, so a key
/// recording uses in a loop fills no disk (each use may hold 256 KiB of input).
pub const MAX_USES: u64 = 1000;

/// The most uses one read returns (`GET /v1/allowances/{id}/uses`, a page's list).
pub const MAX_USES_PAGE: u32 = 200;

/// The most uses the person's pages list under one allowance; the count says how many more.
pub const SHOWN_USES: u32 = 20;

/// A live allowance with the calls it let through, as the feed groups them.
pub struct AllowanceUses {
    pub allowance: Allowance,
    /// How many calls it let through in all.
    pub count: u64,
    /// The first of them (at most `SHOWN_USES`), oldest first.
    pub uses: Vec<AllowanceUse>,
}

/// The allowance an approval's Allow made, as its page shows it.
pub struct MadeAllowance {
    /// What the Allow granted: its length, end and scope.
    pub grant: Grant,
    /// The allowance while it counts; `None` once it ended or was revoked.
    pub live: Option<Allowance>,
    /// The calls it let through, oldest first.
    pub uses: Vec<AllowanceUse>,
}

impl Service {
    /// Records that `call` runs on the inbox's allowance `which`: only while it counts
    /// (`NotFound` otherwise, whether ended, revoked or another inbox's, alike), only for a
    /// call of exactly its scope (a `Validation` issue naming the part that differs), and
    /// only up to `MAX_USES` of them (`Conflict` past that: concurrent records may pass it by
    /// as many as race).
    pub async fn record_allowance_use(
        &self,
        inbox: &Inbox,
        which: Uuid,
        call: &UsedCall,
    ) -> Result<AllowanceUse, ServiceError> {
        let now = super::now();
        let allowance = self
            .store()
            .allowances(inbox.id, None, now)
            .await?
            .into_iter()
            .find(|a| a.id == which)
            .ok_or(ServiceError::NotFound)?;
        if let Some(issue) = call.outside(&allowance.scope) {
            return Err(ServiceError::Validation(vec![issue]));
        }
        let counts = self
            .store()
            .allowance_use_counts(inbox.id, &[which])
            .await?;
        if counts.first().is_some_and(|(_, n)| *n >= MAX_USES) {
            return Err(ServiceError::Conflict(format!(
                "this allowance let its {MAX_USES} calls through; the next ones are asked"
            )));
        }
        // Written only if it still counts at the very write: a revoke in between wins.
        let used = self
            .store()
            .record_allowance_use(inbox.id, which, call, now)
            .await?;
        tracing::info!(allowance = %which, decision = %used.decision_id, tool = %call.tool_name,
            "a call ran on a standing allowance");
        Ok(used)
    }

    /// The uses of the inbox's allowance `which` after `after`, oldest first; they outlive
    /// the allowance (an id the inbox never had reads as none).
    pub async fn allowance_uses(
        &self,
        inbox: &Inbox,
        which: Uuid,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AllowanceUse>, ServiceError> {
        Ok(self
            .store()
            .allowance_uses(inbox.id, which, after, limit.min(MAX_USES_PAGE))
            .await?)
    }

    /// The inbox's allowances that count now (with `scope`, of exactly it), each with how
    /// many calls it let through.
    pub async fn allowances_with_uses(
        &self,
        inbox_id: Uuid,
        scope: Option<&crate::domain::allowance::Scope>,
        now: OffsetDateTime,
    ) -> Result<Vec<(Allowance, u64)>, ServiceError> {
        let items = self.store().allowances(inbox_id, scope, now).await?;
        let ids: Vec<Uuid> = items.iter().map(|a| a.id).collect();
        let counts = self.store().allowance_use_counts(inbox_id, &ids).await?;
        Ok(items
            .into_iter()
            .map(|a| {
                let n = counts
                    .iter()
                    .find(|(id, _)| *id == a.id)
                    .map_or(0, |(_, n)| *n);
                (a, n)
            })
            .collect())
    }

    /// The inbox's allowances that count now, each with the calls it let through.
    pub async fn allowances_and_uses(
        &self,
        inbox_id: Uuid,
        now: OffsetDateTime,
    ) -> Result<Vec<AllowanceUses>, ServiceError> {
        let mut out = Vec::new();
        for (allowance, count) in self.allowances_with_uses(inbox_id, None, now).await? {
            let uses = if count == 0 {
                Vec::new()
            } else {
                self.store()
                    .allowance_uses(inbox_id, allowance.id, 0, SHOWN_USES)
                    .await?
            };
            out.push(AllowanceUses {
                allowance,
                count,
                uses,
            });
        }
        Ok(out)
    }

    /// The allowance the approval `d`'s Allow made, if it made one: what it granted (its
    /// `answered` event holds it), whether it still counts, and the calls it let through
    /// (events of `d` too).
    pub async fn made_allowance(
        &self,
        d: &Decision,
    ) -> Result<Option<MadeAllowance>, ServiceError> {
        if d.spec.approval.is_none() {
            return Ok(None);
        }
        let events = self.store().events(d.id).await?;
        let Some(grant) = events.iter().find_map(|e| {
            (e.kind == EventKind::Answered)
                .then(|| serde_json::from_value::<Grant>(e.detail.get("allowance")?.clone()).ok())
                .flatten()
        }) else {
            return Ok(None);
        };
        let live = self
            .store()
            .allowances(d.inbox_id, None, super::now())
            .await?
            .into_iter()
            .find(|a| a.decision_id == d.id);
        let uses = events
            .into_iter()
            .filter(|e| e.kind == EventKind::AllowanceUsed)
            .filter_map(|e| {
                Some(AllowanceUse {
                    id: 0,
                    allowance_id: e.detail.get("allowance_id")?.as_str()?.parse().ok()?,
                    decision_id: d.id,
                    at: e.at,
                    call: serde_json::from_value(e.detail).ok()?,
                })
            })
            .collect();
        Ok(Some(MadeAllowance { grant, live, uses }))
    }

    /// The person revokes, through the approval link they allowed with, the allowance that
    /// Allow made; `NotFound` when none counts (ended, or revoked already). Revoking only
    /// narrows what passes without asking.
    pub async fn revoke_made_allowance(&self, token: &str) -> Result<(), ServiceError> {
        let (d, _, _) = self.approval_by_token(token).await?;
        let made = self
            .store()
            .allowances(d.inbox_id, None, super::now())
            .await?
            .into_iter()
            .find(|a| a.decision_id == d.id)
            .ok_or(ServiceError::NotFound)?;
        self.store()
            .revoke_allowances(d.inbox_id, Some(made.id))
            .await?;
        tracing::info!(decision = %d.id, allowance = %made.id, "allowance revoked from its page");
        Ok(())
    }
}
