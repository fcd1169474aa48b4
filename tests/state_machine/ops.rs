//! The operations a case is made of, and the strategies that draw them.

use proptest::prelude::*;

/// How a decision is asked; each variant has a default outcome or not.
#[derive(Debug, Clone)]
pub enum Ask {
    Bool {
        labels: bool,
        default: Option<bool>,
    },
    Choose {
        multi: bool,
        allow_other: bool,
        default: bool,
    },
    Text {
        default: bool,
    },
    Form {
        default: bool,
    },
    Todo {
        default: Option<bool>,
    },
}

#[derive(Debug, Clone, Copy)]
pub enum Ttl {
    Default,
    Minutes(i64),
    Seconds(i64),
}

#[derive(Debug, Clone)]
pub struct Create {
    pub ask: Ask,
    pub ttl: Ttl,
    pub allow_remark: bool,
}

/// One step. `target`s pick a decision of the case (modulo how many exist); `variant`s pick
/// one of the answers `answer_for` knows for the decision's kind.
#[derive(Debug, Clone)]
pub enum Op {
    Create(Create),
    /// The create again with its `Idempotency-Key`: the same body, or another one.
    Replay {
        target: usize,
        same_body: bool,
    },
    Get(usize),
    /// `await` with `timeout_s=0`: returns at once.
    Await(usize),
    /// `GET /d/{token}`, the person's page: never changes anything.
    View(usize),
    Answer {
        target: usize,
        valid: bool,
        variant: usize,
        remark: bool,
    },
    Decline {
        target: usize,
        remark: bool,
    },
    TodoAction {
        target: usize,
        done: bool,
    },
    Cancel {
        target: usize,
        reason_too_long: bool,
    },
    /// Time passes by this many seconds, then the expiry sweep runs.
    Advance(i64),
}

fn ask() -> impl Strategy<Value = Ask> {
    prop_oneof![
        (any::<bool>(), proptest::option::of(any::<bool>()))
            .prop_map(|(labels, default)| Ask::Bool { labels, default }),
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(multi, allow_other, default)| {
            Ask::Choose {
                multi,
                allow_other,
                default,
            }
        }),
        any::<bool>().prop_map(|default| Ask::Text { default }),
        any::<bool>().prop_map(|default| Ask::Form { default }),
        proptest::option::of(any::<bool>()).prop_map(|default| Ask::Todo { default }),
    ]
}

fn ttl() -> impl Strategy<Value = Ttl> {
    prop_oneof![
        Just(Ttl::Default),
        prop_oneof![Just(1), Just(2), Just(60), Just(43_200)].prop_map(Ttl::Minutes),
        prop_oneof![Just(10), Just(45), Just(3600), Just(2_592_000)].prop_map(Ttl::Seconds),
    ]
}

pub fn op() -> impl Strategy<Value = Op> {
    let target = 0..8usize;
    prop_oneof![
        4 => (ask(), ttl(), any::<bool>()).prop_map(|(ask, ttl, allow_remark)| {
            Op::Create(Create { ask, ttl, allow_remark })
        }),
        1 => (target.clone(), any::<bool>())
            .prop_map(|(target, same_body)| Op::Replay { target, same_body }),
        2 => target.clone().prop_map(Op::Get),
        1 => target.clone().prop_map(Op::Await),
        1 => target.clone().prop_map(Op::View),
        6 => (target.clone(), any::<bool>(), 0..4usize, any::<bool>()).prop_map(
            |(target, valid, variant, remark)| Op::Answer { target, valid, variant, remark }
        ),
        2 => (target.clone(), any::<bool>())
            .prop_map(|(target, remark)| Op::Decline { target, remark }),
        2 => (target.clone(), any::<bool>())
            .prop_map(|(target, done)| Op::TodoAction { target, done }),
        3 => (target, prop::bool::weighted(0.2))
            .prop_map(|(target, reason_too_long)| Op::Cancel { target, reason_too_long }),
        2 => prop_oneof![Just(5), Just(30), Just(90), Just(3600), Just(86_400 * 31)]
            .prop_map(Op::Advance),
    ]
}
