//! The person's side of a decision, reached through its answer link.

use super::{Service, ServiceError};
use crate::domain::answer::validate_answer;
use crate::domain::{AnswerInput, Decision, EventKind, Status};

impl Service {
    /// The decision an answer link opens; a forged or unknown token is `NotFound`.
    pub async fn decision_by_token(&self, token: &str) -> Result<Decision, ServiceError> {
        let id = self
            .tokens()
            .open_answer_token(token)
            .ok_or(ServiceError::NotFound)?;
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
        if d.status == Status::Pending {
            let detail = serde_json::Value::Object(Default::default());
            if let Err(e) = self
                .store()
                .record_event(d.id, EventKind::Viewed, &detail, super::now())
                .await
            {
                tracing::warn!(error = %e, "could not record a view");
            }
        }
        Ok(d)
    }

    /// A person answers, declines, or marks a to-do done or skipped. The first resolution
    /// wins; a later one gets `AlreadyResolved`, and one after the decision's time `Expired`.
    #[tracing::instrument(name = "answer", skip_all, fields(decision, action = ?input.action))]
    pub async fn submit_answer(
        &self,
        token: &str,
        input: &AnswerInput,
    ) -> Result<Decision, ServiceError> {
        let d = self.decision_by_token(token).await?;
        tracing::Span::current().record("decision", tracing::field::display(d.id));
        match d.status {
            Status::Pending => {}
            Status::Expired => return Err(ServiceError::Expired(Box::new(d))),
            _ => return Err(ServiceError::AlreadyResolved(Box::new(d))),
        }
        let resolution = validate_answer(&d.spec, input).map_err(ServiceError::Validation)?;
        self.apply(d.id, &resolution).await
    }
}
