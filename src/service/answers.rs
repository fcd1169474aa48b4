//! The person's side of a decision: its answer link (`web_url`), and the person links
//! (`/a/…`) that only a person's feed and notifications carry: a tool approval's, and those
//! of a decision sent to people by name. An answer names its person when it is known, and
//! counts by the decision's rule (`tally::tally`).

use uuid::Uuid;

use super::{Service, ServiceError};
use crate::domain::allowance::Grant;
use crate::domain::answer::validate_answer;
use crate::domain::people::{AnswerRecord, Person};
use crate::domain::tally::{self, Tally};
use crate::domain::{
    AnswerChannel, AnswerInput, AnsweredBy, Decision, EventKind, Issue, PersonChannel, Status,
};

/// How many times an answer is tallied again when other answers keep landing first.
const TALLY_ATTEMPTS: usize = 32;

impl Service {
    /// The decision an answer link opens; a forged or unknown token is `NotFound`.
    pub async fn decision_by_token(&self, token: &str) -> Result<Decision, ServiceError> {
        let id = self
            .tokens()
            .open_answer_token(token)
            .ok_or(ServiceError::NotFound)?;
        self.settled_decision(id).await
    }

    /// The decision a person link opens, the person's channel the link was given to, and
    /// the person. A forged link, or one whose person was removed or is no longer asked, is
    /// `NotFound`.
    pub async fn approval_by_token(
        &self,
        token: &str,
    ) -> Result<(Decision, PersonChannel, Person), ServiceError> {
        let (id, channel, person) = self
            .tokens()
            .open_approve_token(token)
            .ok_or(ServiceError::NotFound)?;
        let d = self.settled_decision(id).await?;
        // A link made before people is the inbox's own person's.
        let person = self
            .store()
            .person(person.unwrap_or(d.inbox_id))
            .await?
            .filter(|p| p.inbox_id == d.inbox_id)
            .ok_or(ServiceError::NotFound)?;
        if d.status == Status::Pending
            && !tally::is_asked(&d, &person.name, super::now())
            && !d.answers.iter().any(|a| a.person_id == Some(person.id))
        {
            return Err(ServiceError::NotFound);
        }
        Ok((d, channel, person))
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
    ) -> Result<(Decision, PersonChannel, Person), ServiceError> {
        let (d, channel, person) = self.approval_by_token(token).await?;
        self.record_view(&d, channel.answer_channel()).await;
        Ok((d, channel, person))
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
    /// answer link. A tool approval, and a decision sent to people by name, is refused
    /// (`AnswerElsewhere`, nothing changes): the link is in every API response, so an agent
    /// holds it. A browser bound to a person of the inbox (`device`, its cookie) answers as
    /// that person. The first resolution wins; a later one gets `AlreadyResolved`, and one
    /// after the decision's time `Expired`.
    #[tracing::instrument(name = "answer", skip_all, fields(decision, action = ?input.action))]
    pub async fn submit_answer(
        &self,
        token: &str,
        input: &AnswerInput,
        device: Option<&str>,
    ) -> Result<Decision, ServiceError> {
        let d = self.decision_by_token(token).await?;
        tracing::Span::current().record("decision", tracing::field::display(d.id));
        if d.spec.approval.is_some() || d.spec.routing.is_some() {
            return Err(ServiceError::AnswerElsewhere);
        }
        let bound = self
            .bound_person(device)
            .await
            .filter(|(_, p)| p.inbox_id == d.inbox_id);
        let by = AnsweredBy::new(
            AnswerChannel::Link,
            bound.as_ref().map(|(device, _)| *device),
        );
        self.answer_decision(&d, input, by, bound.map(|(_, p)| p).as_ref(), None)
            .await
    }

    /// A person answers through one of their person links. `device` is the browser's device
    /// cookie, if it sent one: a device bound to that same person is recorded with the
    /// answer.
    #[tracing::instrument(name = "approve", skip_all, fields(decision, channel, person))]
    pub async fn submit_approval(
        &self,
        token: &str,
        input: &AnswerInput,
        device: Option<&str>,
    ) -> Result<Decision, ServiceError> {
        self.submit_approval_granting(token, input, device, None)
            .await
    }

    /// `submit_approval`, an Allow that also grants an allowance: the grant is recorded with
    /// the resolution (its `answered` event), where its receipt reads it.
    pub(super) async fn submit_approval_granting(
        &self,
        token: &str,
        input: &AnswerInput,
        device: Option<&str>,
        grant: Option<&Grant>,
    ) -> Result<Decision, ServiceError> {
        let (d, channel, person) = self.approval_by_token(token).await?;
        let span = tracing::Span::current();
        span.record("decision", tracing::field::display(d.id));
        span.record("channel", channel.answer_channel().as_str());
        span.record("person", person.name.as_str());
        let device_id = self
            .bound_person(device)
            .await
            .filter(|(_, p)| p.id == person.id)
            .map(|(device, _)| device);
        self.answer_decision(
            &d,
            input,
            AnsweredBy::new(channel.answer_channel(), device_id),
            Some(&person),
            grant,
        )
        .await
    }

    /// A person answers from one of their chats (chat.rs): counted like any of their answers.
    pub(super) async fn answer_as(
        &self,
        d: &Decision,
        input: &AnswerInput,
        by: AnsweredBy,
        person: &Person,
    ) -> Result<Decision, ServiceError> {
        self.answer_decision(d, input, by, Some(person), None).await
    }

    /// Validates an answer and counts it by the decision's rule: it resolves the decision,
    /// counts towards it (one of several it needs), or is the same person's again (nothing
    /// changes). Tallied against the answers the decision has, and again if another answer
    /// lands first, so none is counted twice and the decision resolves once.
    async fn answer_decision(
        &self,
        d: &Decision,
        input: &AnswerInput,
        by: AnsweredBy,
        person: Option<&Person>,
        grant: Option<&Grant>,
    ) -> Result<Decision, ServiceError> {
        let mut d = d.clone();
        // A resolved decision says so before anything is checked of the answer.
        let mut resolution = None;
        let mut stepped_up = false;
        for _ in 0..TALLY_ATTEMPTS {
            match d.status {
                Status::Pending => {}
                Status::Expired => return Err(ServiceError::Expired(Box::new(d))),
                _ => return Err(ServiceError::AlreadyResolved(Box::new(d))),
            }
            let resolution = match &mut resolution {
                Some(r) => r,
                None => {
                    let mut r =
                        validate_answer(&d.spec, input).map_err(ServiceError::Validation)?;
                    r.by = Some(by);
                    if let Some(g) = grant {
                        r.detail["allowance"] = serde_json::json!(g);
                    }
                    resolution.insert(r)
                }
            };
            if let Some(p) = person
                && !tally::is_asked(&d, &p.name, super::now())
            {
                return Err(ServiceError::NotFound);
            }
            let edited_command = resolution.detail["edited_command"]
                .as_str()
                .map(str::to_string);
            // Where several must Allow, the others allow the command the agent asked: one
            // person's edit would run what they never saw.
            if edited_command.is_some() && tally::required(&d) > 1 {
                return Err(ServiceError::Validation(vec![Issue {
                    path: "command".into(),
                    message: format!(
                        "this approval needs {} people's Allow, so its command cannot be \
                         edited: allow it as asked, or deny it and say what to run instead",
                        tally::required(&d)
                    ),
                }]));
            }
            let answer = AnswerRecord {
                person: person.map(|p| p.name.clone()),
                person_id: person.map(|p| p.id),
                action: input.action,
                value: resolution.outcome.clone(),
                remark: resolution.remark.clone(),
                edited_command,
                at: super::now(),
                channel: by.channel,
            };
            let tally = tally::tally(&d, &answer);
            if matches!(tally, Tally::AlreadyCounted) {
                return Ok(d);
            }
            // Every Allow under a step-up rule needs the answering person's passkey: a vote
            // towards a rule of several people as much as the one that resolves it. Checked
            // once (it spends its challenge), however often the tally is taken again.
            if !stepped_up {
                self.check_step_up(&d, resolution, input.passkey.as_ref(), person)
                    .await?;
                stepped_up = true;
            }
            match tally {
                Tally::AlreadyCounted => return Ok(d),
                Tally::Counted => {
                    if let Some(now_d) = self
                        .store()
                        .add_answer(d.id, d.answers.len(), &answer, super::now())
                        .await?
                    {
                        self.show_progress(&now_d, person).await;
                        return Ok(now_d);
                    }
                }
                Tally::Resolves => {
                    resolution.answer = Some(answer);
                    resolution.expect_answers =
                        (tally::required(&d) > 1).then_some(d.answers.len());
                    match self.apply_tallied(d.id, resolution).await? {
                        Ok(won) => return Ok(won),
                        Err(now_d) if now_d.status == Status::Pending => {}
                        Err(now_d) => return self.lost(now_d),
                    }
                }
            }
            d = self.settled_decision(d.id).await?;
        }
        Err(ServiceError::Unavailable)
    }

    /// An answer counted towards a rule of several people: the chats that asked edit their
    /// message to show the tally (a `progress` fan-out, one per answering person so each
    /// counted answer has its own). Best effort after the vote is stored: a lost one leaves
    /// the tally unshown until the decision resolves, never an answer lost.
    async fn show_progress(&self, d: &Decision, voter: Option<&Person>) {
        let at = super::now();
        let fan_out = crate::domain::outbox::NewMessage {
            person: voter.map(|p| p.id),
            give_up_at: at + time::Duration::hours(1),
            ..super::message(
                crate::domain::outbox::Route::FanOut,
                crate::domain::outbox::Purpose::Progress,
                at,
            )
        };
        match self.store().enqueue(d.id, &[fan_out], at).await {
            Ok(()) => self.kick_outbox(),
            Err(e) => {
                tracing::warn!(error = %e, decision = %d.id, "could not queue the tally's message")
            }
        }
    }
}
