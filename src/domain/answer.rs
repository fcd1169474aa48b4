//! Checking a person's answer against its decision.

use serde_json::Value;

use super::decision::{AnswerInput, Resolution};
use super::issues::{Issue, Issues};
use super::spec::DecisionSpec;

/// Validates an answer request against the decision it answers and builds the resolution.
pub fn validate_answer(spec: &DecisionSpec, input: &AnswerInput) -> Result<Resolution, Vec<Issue>> {
    let _ = (spec, input);
    todo!()
}

/// Checks an outcome-shaped value (an answer's `value`, or `default_outcome`) and returns
/// it normalised, with whether it is a typed "Other" answer. Problems go to `issues` under `path`.
pub fn check_outcome(
    spec: &DecisionSpec,
    value: &Value,
    path: &str,
    issues: &mut Issues,
) -> Option<(Value, bool)> {
    let _ = (spec, value, path, issues);
    todo!()
}
