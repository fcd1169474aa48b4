//! The small closed vocabularies of a decision: its kind, its status, where its outcome
//! came from and how the person is told.

use serde::{Deserialize, Serialize};

/// What sort of answer a decision asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Bool,
    Choose,
    Text,
    Form,
    Todo,
}

impl Kind {
    pub const ALL: [Kind; 5] = [Kind::Bool, Kind::Choose, Kind::Text, Kind::Form, Kind::Todo];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Choose => "choose",
            Kind::Text => "text",
            Kind::Form => "form",
            Kind::Todo => "todo",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Where a decision is in its life: `pending`, then exactly one of the other four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Answered,
    Declined,
    Expired,
    Cancelled,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::Answered,
        Status::Declined,
        Status::Expired,
        Status::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Answered => "answered",
            Status::Declined => "declined",
            Status::Expired => "expired",
            Status::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn is_resolved(self) -> bool {
        self != Status::Pending
    }
}

/// Who supplied an outcome: a person, or the decision's `default_outcome` on expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeSource {
    Human,
    Default,
}

impl OutcomeSource {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeSource::Human => "human",
            OutcomeSource::Default => "default",
        }
    }

    pub fn parse(s: &str) -> Option<OutcomeSource> {
        match s {
            "human" => Some(OutcomeSource::Human),
            "default" => Some(OutcomeSource::Default),
            _ => None,
        }
    }
}

/// The channel the person is told about a new decision on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    #[default]
    Push,
    Email,
    None,
}

impl Notify {
    pub fn as_str(self) -> &'static str {
        match self {
            Notify::Push => "push",
            Notify::Email => "email",
            Notify::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Notify> {
        match s {
            "push" => Some(Notify::Push),
            "email" => Some(Notify::Email),
            "none" => Some(Notify::None),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert_eq!(Kind::parse("Bool"), None);
        assert!(!Status::Pending.is_resolved());
        assert!(Status::Expired.is_resolved());
    }
}
