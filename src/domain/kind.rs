//! The small closed vocabularies of a decision: its kind, its status, where its outcome
//! came from and how the person is told.

use super::words::words;

/// What sort of answer a decision asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Kind {
    Bool,
    Choose,
    Text,
    Form,
    Todo,
}

words!(Kind {
    Bool => "bool",
    Choose => "choose",
    Text => "text",
    Form => "form",
    Todo => "todo",
});

/// Where a decision is in its life: `pending`, then exactly one of the other four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Answered,
    Declined,
    Expired,
    Cancelled,
}

words!(Status {
    Pending => "pending",
    Answered => "answered",
    Declined => "declined",
    Expired => "expired",
    Cancelled => "cancelled",
});

impl Status {
    pub fn is_resolved(self) -> bool {
        self != Status::Pending
    }
}

/// Who supplied an outcome: a person, or the decision's `default_outcome` on expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum OutcomeSource {
    Human,
    Default,
}

words!(OutcomeSource {
    Human => "human",
    Default => "default",
});

/// The channel the person is told about a new decision on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Notify {
    #[default]
    Push,
    Email,
    None,
}

words!(Notify {
    Push => "push",
    Email => "email",
    None => "none",
});

/// What happened to a decision, as its event log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum EventKind {
    Created,
    /// Its page was opened.
    Viewed,
    /// A notification went out (or failed, or was skipped) on one channel.
    Notified,
    Answered,
    /// A person's answer counted towards a rule of several people, which it did not meet.
    Voted,
    /// Its escalation time came while it was pending: it went to more people.
    Escalated,
    Declined,
    Expired,
    Cancelled,
    /// A call ran on the standing allowance this decision's Allow made (`domain::allowance::uses`).
    #[schema(rename = "allowance_used")]
    AllowanceUsed,
}

words!(EventKind {
    Created => "created",
    Viewed => "viewed",
    Notified => "notified",
    Answered => "answered",
    Voted => "voted",
    Escalated => "escalated",
    Declined => "declined",
    Expired => "expired",
    Cancelled => "cancelled",
    AllowanceUsed => "allowance_used",
});

impl From<Status> for EventKind {
    /// The event a resolution to this status is logged under.
    fn from(s: Status) -> Self {
        match s {
            Status::Pending => EventKind::Created,
            Status::Answered => EventKind::Answered,
            Status::Declined => EventKind::Declined,
            Status::Expired => EventKind::Expired,
            Status::Cancelled => EventKind::Cancelled,
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
