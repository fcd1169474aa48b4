//! Receipts (docs/API.md, Receipts): a resolved decision's signed receipt, its inbox's
//! chain of them, and the public key that checks them.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use serde::Serialize;

#[allow(unused_imports)] // named only in the OpenAPI annotations
use super::shapes::{
    KeyedRefusals, NotFound, ReceiptNotReady, TooManyRequests, Unavailable, ValidationFailed,
};
#[allow(unused_imports)] // named only in the OpenAPI annotations
use crate::domain::receipt::SignedReceipt;
use crate::domain::{Issue, Issues};
use crate::service::{MAX_RECEIPTS_PAGE, Service};
use crate::web::error::ApiError;
use crate::web::extract::{Auth, Segment, decision_id};
use crate::web::json;

pub fn routes() -> Router<Service> {
    Router::new()
        .route("/v1/decisions/{id}/receipt", get(decision_receipt))
        .route("/v1/receipts", get(list_receipts))
        .route("/v1/receipts/key", get(receipt_key))
}

/// The public key receipts are signed with.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(example = json!({"algorithm": "Ed25519",
    "public_key": "e2XyUjT5yC4G3VnQvYl8w0yJ8tq0fT0c8r1m2N3b4Kc", "key_id": "5c1f0e9a3b7d2c48"}))]
pub(crate) struct ReceiptKeyView {
    /// `Ed25519`.
    algorithm: &'static str,
    /// The 32-byte public key, base64url without padding: what `sayso verify --key` and
    /// `sayso hook install` pin.
    public_key: String,
    /// The first 16 hex digits of its SHA-256, which each receipt names as `key_id`.
    key_id: String,
}

/// A page of an inbox's chain of receipts.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ReceiptList {
    /// In chain order (`seq` ascending).
    items: Vec<SignedReceipt>,
    /// The `from` of the next page; null at the end of the chain so far.
    next_from: Option<u64>,
}

/// The signed receipt of a resolved decision, with what was asked (whose hash it signs).
#[utoipa::path(
    get, path = "/v1/decisions/{id}/receipt", tag = "receipts", security(("bearer" = [])),
    params(("id" = String, Path, description = "The decision's id.",
            example = "01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c")),
    responses(
        (status = 200, description = "The receipt. `asked` is left out once the decision \
         itself is past retention.", body = SignedReceipt),
        (status = 404, response = NotFound),
        (status = 409, response = ReceiptNotReady),
        KeyedRefusals,
    )
)]
pub(crate) async fn decision_receipt(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    Segment(id): Segment,
) -> Result<Response, ApiError> {
    let receipt = svc.decision_receipt(&inbox, decision_id(&id)?).await?;
    Ok(json::response(StatusCode::OK, &receipt))
}

/// The key's inbox's chain of receipts, oldest first, from `seq` `from` on: every
/// resolution so far, for `sayso receipts` and `sayso verify`.
#[utoipa::path(
    get, path = "/v1/receipts", tag = "receipts", security(("bearer" = [])),
    params(
        ("from" = Option<u64>, Query, minimum = 1, example = 1,
         description = "The first `seq` to return, default 1."),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 500, example = 100,
         description = "At most this many, default 100."),
    ),
    responses(
        (status = 200, description = "The receipts.", body = ReceiptList),
        (status = 422, response = ValidationFailed),
        KeyedRefusals,
    )
)]
pub(crate) async fn list_receipts(
    State(svc): State<Service>,
    Auth(inbox): Auth,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (from, limit) = parse_query(query.as_deref()).map_err(ApiError::validation)?;
    let items = svc.receipts(&inbox, from, limit).await?;
    let next_from = if items.len() as u32 == limit {
        items
            .last()
            .and_then(|r| r.receipt["seq"].as_u64())
            .map(|s| s + 1)
    } else {
        None
    };
    Ok(json::response(
        StatusCode::OK,
        &ReceiptList { items, next_from },
    ))
}

/// The public key every receipt of this server is signed with. No key needed: it is public,
/// and a client pins it before it holds anything else of the server's.
#[utoipa::path(
    get, path = "/v1/receipts/key", tag = "receipts",
    responses(
        (status = 200, description = "The key.", body = ReceiptKeyView),
        (status = 429, response = TooManyRequests),
        (status = 503, response = Unavailable),
    )
)]
pub(crate) async fn receipt_key(State(svc): State<Service>) -> Result<Response, ApiError> {
    let key = svc.receipt_public_key().await?;
    Ok(json::response(
        StatusCode::OK,
        &ReceiptKeyView {
            algorithm: "Ed25519",
            public_key: key.to_text(),
            key_id: key.key_id(),
        },
    ))
}

fn parse_query(query: Option<&str>) -> Result<(u64, u32), Vec<Issue>> {
    let mut issues = Issues::new();
    let (mut from, mut limit) = (1, 100);
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        match k.as_ref() {
            // A seq is stored as a signed 64-bit integer, as the document's int64 says.
            "from" => match v.parse::<i64>() {
                Ok(n) if n >= 1 => from = n.unsigned_abs(),
                _ => issues.push("from", "must be a whole number from 1"),
            },
            "limit" => match v.parse::<u32>() {
                Ok(n) if (1..=MAX_RECEIPTS_PAGE).contains(&n) => limit = n,
                _ => issues.push(
                    "limit",
                    format!("must be a whole number from 1 to {MAX_RECEIPTS_PAGE}"),
                ),
            },
            _ => {}
        }
    }
    issues.finish((from, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_each_bad_parameter() {
        assert_eq!(parse_query(None).unwrap(), (1, 100));
        assert_eq!(parse_query(Some("from=7&limit=500")).unwrap(), (7, 500));
        let issues = parse_query(Some("from=0&limit=501")).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["from", "limit"]);
        assert!(parse_query(Some("from=9223372036854775808")).is_err());
    }
}
