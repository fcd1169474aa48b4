//! Canonical JSON: one byte string for one JSON value, whatever order its object keys came
//! in, so a hash or a signature over it can be reproduced by anyone holding the value (the
//! idempotency check of a create, a receipt and the question it is about).
//!
//! The rules, for a verifier written elsewhere: object keys sorted by their UTF-8 bytes, no
//! whitespace, strings escaped as serde_json does (`"`, `\`, and control characters only;
//! everything else as raw UTF-8), integers as written, other numbers in their shortest form
//! that reads back to the same double.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical text of `v`.
pub fn canonical_json(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut entries: Vec<_> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // serde_json's parser refuses nesting deeper than 128, so this recursion is bounded.
    sorted(v).to_string()
}

/// SHA-256 of the canonical text of `v`, lowercase hex.
pub fn canonical_sha256(v: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(v).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_ignores_key_order() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":null}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#
        );
        assert_eq!(canonical_sha256(&a), canonical_sha256(&b));
    }
}
