//! JSON responses for the API's hottest answers (a decision, a create's handle).
//!
//! axum's `Json` writes into a 128-byte `BytesMut` that grows as the body is written, and
//! every write through it checks and reserves room on its own; under a profile, that writing
//! was half of what serialising a decision cost. A decision's JSON is about 600 bytes, so it
//! is written here into one buffer sized for it up front.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Room for a decision as the API shows it, notifications included; a larger one grows.
const DECISION_SIZE: usize = 1024;

/// `value` as a JSON response with `status`.
pub fn response(status: StatusCode, value: &impl Serialize) -> Response {
    let mut body = Vec::with_capacity(DECISION_SIZE);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        // Only a map with non-string keys fails to serialise; none of the API's types has one.
        Err(e) => {
            tracing::error!(error = %e, "a response could not be written as JSON");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
