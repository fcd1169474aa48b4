//! A completion callback (docs/API.md, "Completion callbacks"): one HTTP request that resumes a
//! durable workflow when its decision settles, such as a Restate awakeable's resolve URL or a
//! Trigger.dev wait token's completion URL.
//!
//! The asker chooses where it goes (`url`) and the envelope around the body (`wrap_in`), never
//! what it says: the body is always the settled Decision as the API shows it, so a workflow
//! cannot be resumed with an outcome the person did not give.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::issues::{Issues, join};
use super::read::{self, quote_short};

/// The longest `wrap_in` key.
pub const MAX_WRAP_IN_CHARS: usize = 64;

/// Where a settled decision is sent, and in which envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// An absolute http(s) URL.
    pub url: String,
    /// When set, the body is `{"<wrap_in>": Decision}` (Trigger.dev wait tokens take
    /// `{"data": …}`); else the Decision itself (Restate awakeables take the value as is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap_in: Option<String>,
}

impl Completion {
    /// The body sent: the Decision, in the envelope the asker named.
    pub fn body(&self, decision: Value) -> Value {
        match &self.wrap_in {
            Some(key) => Value::Object(Map::from_iter([(key.clone(), decision)])),
            None => decision,
        }
    }
}

/// Parses the create request's `completion` object, each problem under its own path.
pub(super) fn parse_completion(
    v: &Value,
    issues: &mut Issues,
    warnings: &mut Vec<String>,
) -> Option<Completion> {
    const PATH: &str = "completion";
    let obj = read::object(v, PATH, issues)?;
    read::warn_unknown(obj, &["url", "wrap_in"], PATH, warnings);
    let url_path = join(PATH, "url");
    let url = match read::get(obj, "url") {
        None => {
            issues.push(&url_path, "is required");
            None
        }
        Some(v) => read::string(v, &url_path, issues)
            .map(str::trim)
            .and_then(|s| read::parse_http_url(s, &url_path, issues)),
    };
    let wrap_path = join(PATH, "wrap_in");
    let wrap_in = match read::get(obj, "wrap_in") {
        None => Some(None),
        Some(v) => read::string(v, &wrap_path, issues)
            .and_then(|s| check_wrap_in(s, &wrap_path, issues).then(|| Some(s.to_string()))),
    };
    Some(Completion {
        url: url?,
        wrap_in: wrap_in?,
    })
}

/// A key of 1–64 letters, digits, `_` or `-`: an envelope's member name, not a template.
fn check_wrap_in(s: &str, path: &str, issues: &mut Issues) -> bool {
    let n = read::chars(s);
    let ok = (1..=MAX_WRAP_IN_CHARS).contains(&n)
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok {
        issues.push(
            path,
            format!(
                "must be 1–{MAX_WRAP_IN_CHARS} letters, digits, _ or - (got {})",
                quote_short(s)
            ),
        );
    }
    ok
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(v: Value) -> (Option<Completion>, Vec<(String, String)>, Vec<String>) {
        let (mut issues, mut warnings) = (Issues::new(), Vec::new());
        let c = parse_completion(&v, &mut issues, &mut warnings);
        let issues = issues
            .into_vec()
            .into_iter()
            .map(|i| (i.path, i.message))
            .collect();
        (c, issues, warnings)
    }

    #[test]
    fn a_url_alone_sends_the_decision_as_the_body() {
        let (c, issues, _) =
            parse(json!({"url": " http://127.0.0.1:8080/restate/awakeables/a/resolve "}));
        assert!(issues.is_empty(), "{issues:?}");
        let c = c.unwrap();
        assert_eq!(c.url, "http://127.0.0.1:8080/restate/awakeables/a/resolve");
        assert_eq!(
            c.body(json!({"status": "answered"})),
            json!({"status": "answered"})
        );
    }

    #[test]
    fn wrap_in_puts_the_decision_under_one_key() {
        let (c, issues, _) =
            parse(json!({"url": "https://x.example/t/1/complete", "wrap_in": "data"}));
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(
            c.unwrap().body(json!({"outcome": true})),
            json!({"data": {"outcome": true}})
        );
    }

    #[test]
    fn each_bad_part_is_named() {
        let (c, issues, _) = parse(json!({"wrap_in": "a.b"}));
        assert!(c.is_none());
        let paths: Vec<&str> = issues.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["completion.url", "completion.wrap_in"]);
        for bad in [
            json!({"url": "ftp://x.example/"}),
            json!({"url": 3}),
            json!({"url": "/relative"}),
        ] {
            let (c, issues, _) = parse(bad);
            assert!(c.is_none());
            assert_eq!(issues[0].0, "completion.url", "{issues:?}");
        }
        for bad in ["", "x".repeat(65).as_str(), "{{outcome}}"] {
            let (_, issues, _) = parse(json!({"url": "https://x.example/", "wrap_in": bad}));
            assert_eq!(issues[0].0, "completion.wrap_in", "{issues:?}");
        }
        let (_, issues, _) = parse(json!("https://x.example/"));
        assert_eq!(issues[0].0, "completion");
    }

    #[test]
    fn a_body_of_the_askers_own_is_ignored_with_a_warning() {
        let (c, issues, warnings) =
            parse(json!({"url": "https://x.example/", "body": {"outcome": "allow"}}));
        assert!(issues.is_empty());
        assert_eq!(c.unwrap().body(json!(1)), json!(1));
        assert_eq!(warnings, ["unknown field \"body\" in completion ignored"]);
    }
}
