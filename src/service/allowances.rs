//! Standing allowances (`domain::allowance`): made only by a person's Allow through their
//! own link, read and revoked with the inbox's API key (revoking only narrows what passes),
//! and revoked from the person's feed.

use uuid::Uuid;

use super::{Service, ServiceError, Viewer};
use crate::domain::allowance::{AllowFor, Allowance, Grant, scope_of};
use crate::domain::approval::ALLOW;
use crate::domain::inbox::Inbox;
use crate::domain::{AnswerAction, AnswerInput, Decision, Issue, Status};

impl Service {
    /// A person answers through one of their person links, as `submit_approval`; with
    /// `allow_for`, their Allow also lets the same kind of call through for that long
    /// (`domain::allowance`). The allowance is written once the Allow is recorded, and only
    /// when this answer resolved the approval as Allow; `allow_for` with any other answer, or
    /// on an approval that may not have one (a passkey's, one naming people), changes
    /// nothing and is a `Validation` issue at `allow_for`.
    pub async fn submit_approval_for(
        &self,
        token: &str,
        input: &AnswerInput,
        device: Option<&str>,
        allow_for: Option<AllowFor>,
    ) -> Result<(Decision, Option<Allowance>), ServiceError> {
        let Some(allow_for) = allow_for else {
            let d = self.submit_approval(token, input, device).await?;
            return Ok((d, None));
        };
        let (d, channel, person) = self.approval_by_token(token).await?;
        if d.status == Status::Pending {
            let is_allow = input.action == AnswerAction::Answer
                && input.value.as_ref().and_then(|v| v.as_str()) == Some(ALLOW);
            let scope = scope_of(&d).map_err(|m| issue(m.to_string()))?;
            if !is_allow {
                return Err(issue(format!("goes only with the answer {ALLOW}")));
            }
            // The zone the page labelled the choice in: the person's, else the inbox's own.
            let zone = self.page_reader(None, Some(&person), d.inbox_id).await.zone;
            let now = super::now();
            // Fixed before the answer is recorded: the resolution carries it, so the receipt
            // of this Allow signs exactly the allowance written below.
            let grant = Grant::new(allow_for, scope, now, zone.as_deref());
            let answered = self
                .submit_approval_granting(token, input, device, Some(&grant))
                .await?;
            let resolved_by_this = answered.status == Status::Answered
                && answered.outcome.as_ref().and_then(|v| v.as_str()) == Some(ALLOW)
                && answered
                    .answers
                    .last()
                    .is_some_and(|a| a.person_id == Some(person.id));
            if !resolved_by_this {
                return Ok((answered, None));
            }
            let allowance = Allowance {
                id: Uuid::now_v7(),
                inbox_id: d.inbox_id,
                decision_id: d.id,
                person_id: Some(person.id),
                person: Some(person.name.clone()),
                channel: channel.answer_channel(),
                scope: grant.scope,
                session_id: d.spec.approval.as_ref().and_then(|a| a.session_id.clone()),
                created_at: now,
                until: grant.until,
            };
            let stored = self.store().add_allowance(&allowance).await?;
            tracing::info!(decision = %d.id, allowance = %stored.id, until = %stored.until,
                "a person allowed a tool for a while");
            return Ok((answered, Some(stored)));
        }
        // Resolved already: the answer says so, and no allowance is made.
        let d = self.submit_approval(token, input, device).await?;
        Ok((d, None))
    }

    /// Revokes the inbox's allowance `which` (`NotFound` when it has none by that id), or
    /// all of them; returns how many.
    pub async fn revoke_allowances(
        &self,
        inbox: &Inbox,
        which: Option<Uuid>,
    ) -> Result<u64, ServiceError> {
        let n = self.store().revoke_allowances(inbox.id, which).await?;
        if which.is_some() && n == 0 {
            return Err(ServiceError::NotFound);
        }
        tracing::info!(inbox = %inbox.id, revoked = n, "allowances revoked");
        Ok(n)
    }

    /// A person revokes one of their inbox's allowances from their feed.
    pub async fn revoke_allowance_from_feed(
        &self,
        viewer: &Viewer,
        which: Uuid,
    ) -> Result<(), ServiceError> {
        self.revoke_allowances(&viewer.inbox, Some(which))
            .await
            .map(|_| ())
    }
}

fn issue(message: String) -> ServiceError {
    ServiceError::Validation(vec![Issue {
        path: "allow_for".into(),
        message,
    }])
}
