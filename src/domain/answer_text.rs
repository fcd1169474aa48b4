//! `answer_text`: one plain sentence an agent can hand its model as is.

use super::decision::Decision;

/// Says what happened to the decision, including plainly when nobody answered.
pub fn answer_text(decision: &Decision) -> String {
    let _ = decision;
    todo!()
}
