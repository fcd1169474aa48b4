//! The rules of a decision, with no IO: what a valid request is, what a valid answer is,
//! and how a resolution reads in one sentence.
//!
//! Uses no other room: it is the bottom (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod address;
pub mod allowance;
pub mod answer;
pub mod answer_text;
pub mod answered_by;
pub mod approval;
pub mod canonical;
pub mod chat;
pub mod completion;
pub mod danger;
pub mod decision;
mod form_answer;
pub mod form_schema;
pub mod image;
pub mod inbox;
pub mod issues;
pub mod kind;
pub mod lang;
pub mod new_decision;
pub mod options;
pub mod origin;
pub mod outbox;
pub mod people;
pub mod questions;
pub mod quiet;
mod read;
pub mod receipt;
pub mod shell;
pub mod spec;
pub mod subscription;
pub mod tally;
pub mod time_zone;
pub mod webauthn;
mod words;

pub use answered_by::{AnswerChannel, AnsweredBy, PersonChannel};
pub use decision::{
    AnswerInput, CancelReason, Decision, DecisionEvent, NewDecision, NotificationState, Resolution,
};
pub use issues::{Issue, Issues};
pub use kind::{EventKind, Kind, Notify, OutcomeSource, Status};
pub use people::AnswerAction;
pub use spec::DecisionSpec;
