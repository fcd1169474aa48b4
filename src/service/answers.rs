//! The person's side of a decision: its answer link (`web_url`), and for a tool approval
//! the approval links that only the person's feed and notifications carry.

use uuid::Uuid;

use super::{Service, ServiceError};
use crate::domain::answer::validate_answer;
use crate::domain::{
    AnswerChannel, AnswerInput, AnsweredBy, Decision, EventKind, PersonChannel, Status,
};

impl Service {
    /// The decision an answer link opens; a forged or unknown token is `NotFound`.
    pub async fn decision_by_token(&self, token: &str) -> Result<Decision, ServiceError> {
        let id = self
            .tokens()
            .open_answer_token(token)
            .ok_or(ServiceError::NotFound)?;
        self.settled_decision(id).await
    }

    /// The tool approval an approval link opens, and the person's channel the link was
    /// given to. A forged link, or one naming a decision that is not an approval, is
    /// `NotFound`.
    pub async fn approval_by_token(
        &self,
        token: &str,
    ) -> Result<(Decision, PersonChannel), ServiceError> {
        let (id, channel) = self
            .tokens()
            .open_approve_token(token)
            .ok_or(ServiceError::NotFound)?;
        let d = self.settled_decision(id).await?;
        if d.spec.approval.is_none() {
            return Err(ServiceError::NotFound);
        }
        Ok((d, channel))
    }

    async fn settled_decision(&self, id: Uuid) -> Result<Decision, ServiceError> {
        let d = self
            .store()
            .decision(None, id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.settle(d).await
    }

    /// The context image of the decision an answer link opens: its content type and bytes.
    /// `NotFound` for a wrong link or a decision without one.
    pub async fn image_by_token(&self, token: &str) -> Result<(String, Vec<u8>), ServiceError> {
        let d = self.decision_by_token(token).await?;
        if !d.has_image {
            return Err(ServiceError::NotFound);
        }
        self.store()
            .image(d.id)
            .await?
            .ok_or(ServiceError::NotFound)
    }

    /// The decision for its answer page; a pending one records that it was viewed (the
    /// audit trail's `viewed`), which changes nothing about its state.
    pub async fn view_by_token(&self, token: &str) -> Result<Decision, ServiceError> {
        let d = self.decision_by_token(token).await?;
        self.record_view(&d, AnswerChannel::Link).await;
        Ok(d)
    }

    /// The tool approval for its answering page, recorded as viewed like `view_by_token`.
    pub async fn view_approval(
        &self,
        token: &str,
    ) -> Result<(Decision, PersonChannel), ServiceError> {
        let (d, channel) = self.approval_by_token(token).await?;
        self.record_view(&d, channel.answer_channel()).await;
        Ok((d, channel))
    }

    async fn record_view(&self, d: &Decision, channel: AnswerChannel) {
        if d.status != Status::Pending {
            return;
        }
        let detail = serde_json::json!({ "channel": channel.as_str() });
        if let Err(e) = self
            .store()
            .record_event(d.id, EventKind::Viewed, &detail, super::now())
            .await
        {
            tracing::warn!(error = %e, "could not record a view");
        }
    }

    /// A person answers, declines, or marks a to-do done or skipped through the decision's
    /// answer link. A tool approval is refused (`AnswerElsewhere`, nothing changes): its
    /// link is in every API response, so an agent holds it. The first resolution wins; a
    /// later one gets `AlreadyResolved`, and one after the decision's time `Expired`.
    #[tracing::instrument(name = "answer", skip_all, fields(decision, action = ?input.action))]
    pub async fn submit_answer(
        &self,
        token: &str,
        input: &AnswerInput,
    ) -> Result<Decision, ServiceError> {
        let d = self.decision_by_token(token).await?;
        tracing::Span::current().record("decision", tracing::field::display(d.id));
        if d.spec.approval.is_some() {
            return Err(ServiceError::AnswerElsewhere);
        }
        self.answer_decision(&d, input, AnsweredBy::new(AnswerChannel::Link, None))
            .await
    }

    /// The person answers a tool approval through one of its approval links. `device` is
    /// the browser's device cookie, if it sent one: a device bound to the decision's inbox
    /// is recorded with the answer.
    #[tracing::instrument(name = "approve", skip_all, fields(decision, channel))]
    pub async fn submit_approval(
        &self,
        token: &str,
        input: &AnswerInput,
        device: Option<&str>,
    ) -> Result<Decision, ServiceError> {
        let (d, channel) = self.approval_by_token(token).await?;
        let span = tracing::Span::current();
        span.record("decision", tracing::field::display(d.id));
        span.record("channel", channel.answer_channel().as_str());
        let device_id = self.bound_device(device, d.inbox_id).await;
        self.answer_decision(
            &d,
            input,
            AnsweredBy::new(channel.answer_channel(), device_id),
        )
        .await
    }

    async fn answer_decision(
        &self,
        d: &Decision,
        input: &AnswerInput,
        by: AnsweredBy,
    ) -> Result<Decision, ServiceError> {
        match d.status {
            Status::Pending => {}
            Status::Expired => return Err(ServiceError::Expired(Box::new(d.clone()))),
            _ => return Err(ServiceError::AlreadyResolved(Box::new(d.clone()))),
        }
        let mut resolution = validate_answer(&d.spec, input).map_err(ServiceError::Validation)?;
        resolution.by = Some(by);
        self.check_step_up(d, &mut resolution, input.passkey.as_ref())
            .await?;
        self.apply(d.id, &resolution).await
    }
}
