//! Extractors whose rejections are `ApiError`s, so no malformed request gets axum's
//! plain-text errors.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use uuid::Uuid;

use super::error::ApiError;
use crate::domain::inbox::Inbox;
use crate::service::Service;

/// The body parsed as JSON: not JSON at all → 400, too large → 413.
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    "the request body is too large",
                )
            } else {
                ApiError::bad_request(format!("could not read the request body: {e}"))
            }
        })?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// Parses a JSON body; the error names what is wrong and where.
pub fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "the request body is empty; send a JSON object",
        ));
    }
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    match nul_path(&value) {
        // Valid JSON, but no database keeps a NUL inside text: refuse it by name.
        Some(path) => Err(ApiError::validation(vec![crate::domain::Issue {
            path,
            message: "text must not contain the NUL character (\\u0000)".into(),
        }])),
        None => Ok(value),
    }
}

/// The JSON path of the first string or key holding a NUL character.
fn nul_path(root: &Value) -> Option<String> {
    use crate::domain::issues::{index, join};
    // Iterative, so the depth of the input never matters.
    let mut stack = vec![(String::new(), root)];
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::String(s) if s.contains('\0') => return Some(path),
            Value::Array(items) => {
                stack.extend(items.iter().enumerate().map(|(i, v)| (index(&path, i), v)));
            }
            Value::Object(m) => {
                for (k, v) in m {
                    let p = join(&path, k);
                    if k.contains('\0') {
                        return Some(p);
                    }
                    stack.push((p, v));
                }
            }
            _ => {}
        }
    }
    None
}

/// The inbox of the request's API key.
pub struct Auth(pub Inbox);

impl FromRequestParts<Service> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, svc: &Service) -> Result<Self, ApiError> {
        let ApiKey(key) = ApiKey::from_request_parts(parts, svc).await?;
        // Boxed: a handler's future is as large as its largest step, and the key's lookup
        // (a database read) would otherwise stay in every parked await's for as long as it
        // waits (docs/PERFORMANCE.md, "A parked await's memory").
        let inbox = Box::pin(svc.authenticate(&key)).await;
        Ok(Auth(inbox.map_err(ApiError::from)?))
    }
}

/// The request's API key, not yet checked: for a handler that checks it in its own query.
/// Empty when the request has none, which no check accepts.
pub struct ApiKey(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ApiKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        Ok(ApiKey(bearer(&parts.headers).unwrap_or("").to_owned()))
    }
}

/// The token of the request's `Authorization: Bearer …`, trimmed (maybe empty).
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
}

/// One path segment as text. A segment that does not decode as UTF-8 names nothing here, so
/// it is a 404 in the error shape rather than axum's plain-text 400.
pub struct Segment(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<String>::from_request_parts(parts, state)
            .await
            .map(|p| Segment(p.0))
            .map_err(|_| ApiError::not_found())
    }
}

/// A decision id from the path; anything that is not a UUID is simply not found.
pub fn decision_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::not_found())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_characters_are_found_by_path() {
        let v: Value = serde_json::from_str(r#"{"a": [1, {"b": "x\u0000y"}]}"#).unwrap();
        assert_eq!(nul_path(&v).as_deref(), Some("a[1].b"));
        let v: Value = serde_json::from_str(r#"{"ok": ["fine"]}"#).unwrap();
        assert_eq!(nul_path(&v), None);
        let err = parse_json(br#"{"question": "a\u0000"}"#).unwrap_err();
        assert_eq!(err.details[0].path, "question");
    }
}
