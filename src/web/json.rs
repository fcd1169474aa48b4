//! JSON responses for the API's hottest answers (a decision, a create's handle).
//!
//! axum's `Json` writes into a 128-byte `BytesMut` that grows as the body is written, and
//! every write through it checks and reserves room on its own; under a profile, that writing
//! was half of what serialising a decision cost. A decision's JSON is about 600 bytes, so it
//! is written here into one buffer sized for it up front.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::service::ServiceError;
use crate::web::error::ApiError;

/// Room for a decision as the API shows it, notifications included; a larger one grows.
const DECISION_SIZE: usize = 1024;

/// `value` as a JSON response with `status`.
pub fn response(status: StatusCode, value: &impl Serialize) -> Response {
    let mut body = Vec::with_capacity(DECISION_SIZE);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => written(status, body.into()),
        // Only a map with non-string keys fails to serialise; none of the API's types has one.
        // Should one ever, the caller gets the API's error shape, and the log the cause.
        Err(e) => ApiError::from(ServiceError::Internal(format!(
            "a response could not be written as JSON: {e}"
        )))
        .into_response(),
    }
}

/// A JSON response with `status` whose body is already written.
pub fn written(status: StatusCode, body: bytes::Bytes) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[tokio::test]
    async fn a_value_that_cannot_be_written_gets_the_api_error_shape() {
        // JSON object keys must be strings; a map keyed by pairs cannot be written.
        let unwritable = BTreeMap::from([((1, 2), "x")]);
        let resp = response(StatusCode::OK, &unwritable);
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(resp.into_body(), 4096)
            .await
            .expect("body");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("a JSON body");
        assert_eq!(v["error"]["code"], "internal", "{v}");
    }

    #[tokio::test]
    async fn a_value_is_written_with_its_status_and_type() {
        let resp = response(StatusCode::CREATED, &serde_json::json!({"a": 1}));
        assert_eq!(resp.status(), StatusCode::CREATED);
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(resp.into_body(), 4096)
            .await
            .expect("body");
        assert_eq!(&body[..], br#"{"a":1}"#);
    }
}
