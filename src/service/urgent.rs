//! `urgent`: a question that rings through the people's quiet hours. Only keys the operator
//! allowed may ask one (`sayso key create --urgent`, `sayso key set KEY --urgent yes`), and
//! those at most `SAYSO_URGENT_PER_HOUR` an hour. Past either, the question is still asked,
//! as not urgent, with a warning saying why: the agent keeps its question and learns the
//! rule, and the person sleeps.

use time::OffsetDateTime;

use super::{Service, ServiceError, now};
use crate::domain::NewDecision;
use crate::domain::inbox::Inbox;
use crate::storage::UrgentUse;

/// What the warning of a key that may not ask urgent questions says.
const NOT_ALLOWED: &str = "urgent: this API key may not ring through quiet hours, so it was \
     asked as not urgent; the operator allows a key urgent questions with `sayso key set \
     KEY_ID --urgent yes`";

impl Service {
    /// Keeps `new`'s `urgent` only if the request's key may use it now, counting the use;
    /// otherwise asks it as not urgent and says why in its warnings. A create retried with
    /// the same Idempotency-Key counts again, as one the quota refuses does: the count is of
    /// urgent asks made, which is what the cap bounds.
    pub(super) async fn limit_urgent(
        &self,
        inbox: &Inbox,
        new: &mut NewDecision,
    ) -> Result<(), ServiceError> {
        let Some(routing) = new.spec.routing.as_mut().filter(|r| r.urgent) else {
            return Ok(());
        };
        // An inbox read by name or id is the server's own command, not an agent's key.
        let Some(key) = inbox.key else {
            return Ok(());
        };
        let refused = if key.urgent {
            let cap = Some(self.settings().urgent_per_hour).filter(|n| *n > 0);
            match self.store().use_urgent(key.id, now(), cap).await? {
                UrgentUse::Granted => None,
                // Forbidden (or revoked) since the request's key was read.
                UrgentUse::NotAllowed => Some(NOT_ALLOWED.to_string()),
                UrgentUse::Spent { until } => Some(spent(cap.unwrap_or(0), until)),
            }
        } else {
            Some(NOT_ALLOWED.to_string())
        };
        if let Some(why) = refused {
            routing.urgent = false;
            new.warnings.push(why);
        }
        Ok(())
    }
}

/// The warning of a key past its hourly cap.
fn spent(cap: u32, until: OffsetDateTime) -> String {
    format!(
        "urgent: this API key has asked its {cap} urgent questions of the last hour \
         (SAYSO_URGENT_PER_HOUR), so it was asked as not urgent; the next may be urgent from {}",
        until
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    )
}
