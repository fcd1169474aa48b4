//! Request bodies: the create body of an ask, its default outcome, and valid and invalid
//! answers for it.

use serde_json::{Value, json};

use crate::ops::{Ask, Create, Ttl};

/// The create body of an ask.
pub fn create_body(c: &Create) -> Value {
    let mut body = match &c.ask {
        Ask::Bool { labels, default } => {
            let mut b = json!({"question": "Deploy?", "kind": "bool"});
            if *labels {
                b["yes_label"] = json!("Ship it");
                b["no_label"] = json!("Wait");
            }
            if let Some(d) = default {
                b["default_outcome"] = json!(d);
            }
            b
        }
        Ask::Choose {
            multi,
            allow_other,
            default,
        } => {
            let mut b = json!({"question": "Which?", "kind": "choose", "options": ["A", "B", "C"],
                "multi": multi, "allow_other": allow_other});
            if *default {
                b["default_outcome"] = if *multi {
                    json!(["c", "A"])
                } else {
                    json!("b")
                };
            }
            b
        }
        Ask::Text { default } => {
            let mut b = json!({"question": "Name?", "kind": "text"});
            if *default {
                b["default_outcome"] = json!("  fallback ");
            }
            b
        }
        Ask::Form { default } => {
            let mut b = json!({"question": "Details", "kind": "form", "schema": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 1, "maximum": 9},
                    "env": {"type": "string", "enum": ["staging", "prod"]}
                },
                "required": ["n"]
            }});
            if *default {
                b["default_outcome"] = json!({"n": "3"});
            }
            b
        }
        Ask::Todo { default } => {
            let mut b = json!({"question": "Rotate the keys", "kind": "todo"});
            if let Some(done) = default {
                b["default_outcome"] = json!(if *done { "done" } else { "skipped" });
            }
            b
        }
    };
    match c.ttl {
        Ttl::Default => {}
        Ttl::Minutes(m) => body["ttl_minutes"] = json!(m),
        Ttl::Seconds(s) => body["ttl_seconds"] = json!(s),
    }
    body["allow_remark"] = json!(c.allow_remark);
    body["notify"] = json!("none");
    body
}

/// The default outcome as the service normalises it.
pub fn default_outcome(ask: &Ask) -> Option<Value> {
    match ask {
        Ask::Bool { default, .. } => default.map(|d| json!(d)),
        Ask::Choose { multi, default, .. } => default.then(|| {
            if *multi {
                json!(["A", "C"])
            } else {
                json!("B")
            }
        }),
        Ask::Text { default } => default.then(|| json!("fallback")),
        Ask::Form { default } => default.then(|| json!({"n": 3})),
        Ask::Todo { default } => default.map(|d| json!(if d { "done" } else { "skipped" })),
    }
}

/// An answer body for a decision of this ask, and the outcome (and `custom`) it must give
/// when `valid`; an invalid one must be refused with 422.
pub fn answer_for(ask: &Ask, valid: bool, variant: usize) -> (Value, Option<(Value, bool)>) {
    let pick = |list: Vec<(Value, Option<(Value, bool)>)>| list[variant % list.len()].clone();
    let ok = |body: Value, outcome: Value| (body, Some((outcome, false)));
    let bad = |body: Value| (body, None);
    match (ask, valid) {
        (Ask::Bool { labels, .. }, true) => pick(vec![
            ok(json!({"value": true}), json!(true)),
            ok(json!({"value": "no"}), json!(false)),
            ok(json!({"value": " YES "}), json!(true)),
            if *labels {
                ok(json!({"value": "wait"}), json!(false))
            } else {
                ok(json!({"value": "No"}), json!(false))
            },
        ]),
        (Ask::Bool { .. }, false) => pick(vec![
            bad(json!({"value": "maybe"})),
            bad(json!({"value": 1})),
            bad(json!({})),
            bad(json!({"value": true, "other": "typed"})),
        ]),
        (
            Ask::Choose {
                multi: false,
                allow_other,
                ..
            },
            true,
        ) => pick(vec![
            ok(json!({"value": "A"}), json!("A")),
            ok(json!({"value": " c "}), json!("C")),
            if *allow_other {
                (json!({"other": " Z "}), Some((json!("Z"), true)))
            } else {
                ok(json!({"value": "b"}), json!("B"))
            },
            // Typed text that is one of the labels is that option.
            ok(json!({"other": "b"}), json!("B")),
        ]),
        (
            Ask::Choose {
                multi: false,
                allow_other,
                ..
            },
            false,
        ) => pick(vec![
            bad(json!({"value": "D"})),
            bad(json!({"value": ["A", "B"]})),
            bad(json!({})),
            if *allow_other {
                bad(json!({"value": "A", "other": "Z"}))
            } else {
                bad(json!({"other": "Z"}))
            },
        ]),
        (
            Ask::Choose {
                multi: true,
                allow_other,
                ..
            },
            true,
        ) => pick(vec![
            ok(json!({"value": ["C", "a"]}), json!(["A", "C"])),
            ok(json!({"value": "B"}), json!(["B"])),
            if *allow_other {
                (
                    json!({"value": ["B"], "other": "Z"}),
                    Some((json!(["B", "Z"]), true)),
                )
            } else {
                ok(json!({"value": ["B", "C", "A"]}), json!(["A", "B", "C"]))
            },
            ok(json!({"value": ["C"], "other": "a"}), json!(["A", "C"])),
        ]),
        (
            Ask::Choose {
                multi: true,
                allow_other,
                ..
            },
            false,
        ) => pick(vec![
            bad(json!({"value": []})),
            bad(json!({"value": ["A", "D"]})),
            bad(json!({"value": ["A", "a"]})),
            if *allow_other {
                bad(json!({"value": {"A": true}}))
            } else {
                bad(json!({"value": ["A"], "other": "Z"}))
            },
        ]),
        (Ask::Text { .. }, true) => pick(vec![
            ok(json!({"value": "payments"}), json!("payments")),
            ok(json!({"value": "  padded  "}), json!("padded")),
            ok(json!({"value": "日本語 ✓"}), json!("日本語 ✓")),
        ]),
        (Ask::Text { .. }, false) => pick(vec![
            bad(json!({"value": "   "})),
            bad(json!({"value": 5})),
            bad(json!({"value": "x".repeat(10_001)})),
            bad(json!({"other": "typed"})),
        ]),
        (Ask::Form { .. }, true) => pick(vec![
            ok(json!({"value": {"n": 3}}), json!({"n": 3})),
            ok(
                json!({"value": {"n": "9", "env": "prod"}}),
                json!({"n": 9, "env": "prod"}),
            ),
            ok(
                json!({"value": {"n": 1, "env": "", "unknown": 1}}),
                json!({"n": 1}),
            ),
        ]),
        (Ask::Form { .. }, false) => pick(vec![
            bad(json!({"value": {}})),
            bad(json!({"value": {"n": 10}})),
            bad(json!({"value": {"n": 2, "env": "dev"}})),
            bad(json!({"value": "n=3"})),
        ]),
        (Ask::Todo { .. }, true) => pick(vec![
            ok(json!({"value": "done"}), json!("done")),
            ok(json!({"value": "skipped"}), json!("skipped")),
        ]),
        (Ask::Todo { .. }, false) => pick(vec![
            bad(json!({"value": "later"})),
            bad(json!({})),
            bad(json!({"value": true})),
        ]),
    }
}
