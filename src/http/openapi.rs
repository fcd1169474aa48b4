//! The OpenAPI 3.1 document of the agent API (`GET /openapi.json`), generated from the
//! handlers' annotations and the types they return, and the API docs page (`/docs`): Swagger
//! UI from the crate's vendored copy, so every asset comes from this server.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Request;
use axum::http::header;
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{
    InfoBuilder, LicenseBuilder, ObjectBuilder, OneOfBuilder, Ref, RefOr, Required, Schema, Type,
};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::{Config, SwaggerUi};

use super::shapes::{
    AlreadyResolved, AnswerElsewhere, BadRequest, CreateDecision, EventList, Expired,
    KeyedRefusals, NotFound, PayloadTooLarge, ReceiptNotReady, TooManyRequests, Unauthorized,
    Unavailable, ValidationFailed,
};
use crate::service::Service;

/// The document, with every path of the agent API.
#[derive(OpenApi)]
#[openapi(
    paths(
        super::api::create_decision,
        super::api::list_decisions,
        super::api::get_decision,
        super::api::await_decision,
        super::api::cancel_decision,
        super::api::decision_events,
        super::receipts::decision_receipt,
        super::receipts::list_receipts,
        super::receipts::receipt_key,
        super::allowances::list_allowances,
        super::allowances::revoke_allowance,
        super::allowances::revoke_all_allowances,
        super::allowance_uses::record_use,
        super::allowance_uses::list_uses,
        super::pages::answer::show_answer_page,
        super::pages::answer::submit_answer,
        decision_stream,
        usage,
        super::healthz,
        super::readyz,
    ),
    components(
        schemas(crate::web::error::Body, CreateDecision, EventList, crate::service::UsageView),
        responses(
            BadRequest,
            Unauthorized,
            NotFound,
            AlreadyResolved,
            AnswerElsewhere,
            Expired,
            PayloadTooLarge,
            ValidationFailed,
            TooManyRequests,
            ReceiptNotReady,
            Unavailable
        )
    ),
    tags(
        (name = "decisions", description = "Ask a person, wait for the answer, read it back."),
        (name = "answers", description = "Answer a decision through its capability link, as the answer page does."),
        (name = "allowances", description = "Standing allowances the person gave: read and revoke them, and record and read the calls they let through."),
        (name = "events", description = "Resolutions as they happen."),
        (name = "receipts", description = "Signed receipts of resolutions, chained per inbox, and the key that checks them."),
        (name = "usage", description = "Actions used and the daily quota."),
        (name = "health", description = "Liveness and readiness for load balancers."),
    ),
    modifiers(&InfoAndSecurity, &Precisions)
)]
pub struct ApiDoc;

/// The document as served, made once.
static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
    ApiDoc::openapi()
        .to_json()
        .expect("the OpenAPI document serializes")
});

/// `/openapi.json` and the docs page at `/docs`.
pub fn routes() -> Router<Service> {
    let ui = SwaggerUi::new("/docs").config(
        Config::new(["/openapi.json"])
            // Swagger UI would otherwise show a badge fetched from validator.swagger.io.
            .validator_url("none")
            .persist_authorization(false),
    );
    Router::new()
        .route("/openapi.json", get(openapi_json))
        .merge(Router::from(ui).layer(from_fn(docs_headers)))
}

async fn openapi_json() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
        .into_response()
}

/// Swagger UI draws with inline styles and data: images; it loads nothing from another host
/// and talks only to this server.
pub const DOCS_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async fn docs_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    crate::web::headers::document(resp.headers_mut(), DOCS_CONTENT_SECURITY_POLICY);
    resp
}

/// `info` written out (Cargo's fields alone leave parts empty) and the bearer key scheme.
struct InfoAndSecurity;

impl Modify for InfoAndSecurity {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        doc.info = InfoBuilder::new()
            .title("sayso")
            .version(env!("CARGO_PKG_VERSION"))
            .description(Some(DESCRIPTION))
            .license(Some(
                LicenseBuilder::new()
                    .name("MIT")
                    .identifier(Some("MIT"))
                    .build(),
            ))
            .build();
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .bearer_format("sk_…")
                        .description(Some(
                            "The inbox's API key: `Authorization: Bearer sk_…`. A decision of \
                             another inbox is `404`, never `403`.",
                        ))
                        .build(),
                ),
            );
    }
}

/// What the annotations cannot say.
struct Precisions;

impl Modify for Precisions {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let paths = &mut doc.paths.paths;
        // `timeout_s` is any whole number of seconds, clamped: no int64 bound applies.
        if let Some(op) = paths
            .get_mut("/v1/decisions/{id}/await")
            .and_then(|p| p.get.as_mut())
        {
            for param in op.parameters.iter_mut().flatten() {
                if let RefOr::T(p) = param
                    && p.name == "timeout_s"
                {
                    p.schema = Some(
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(0))
                            .build()
                            .into(),
                    );
                }
            }
        }
        // An empty `status` or `kind` filters nothing, as a form with nothing picked sends.
        if let Some(op) = paths.get_mut("/v1/decisions").and_then(|p| p.get.as_mut()) {
            for param in op.parameters.iter_mut().flatten() {
                let RefOr::T(p) = param else { continue };
                let schema = match p.name.as_str() {
                    "status" => "Status",
                    "kind" => "Kind",
                    _ => continue,
                };
                let one_of = OneOfBuilder::new()
                    .item(Ref::from_schema_name(schema))
                    .item(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some([""])),
                    )
                    .build();
                p.schema = Some(Schema::OneOf(one_of).into());
            }
        }
        // A create's handle names the decision the other operations take: links say so, for
        // clients that follow them (and schemathesis's stateful phase, which chains
        // create → get / await / events / cancel through them).
        if let Some(op) = paths.get_mut("/v1/decisions").and_then(|p| p.post.as_mut()) {
            for status in ["200", "201"] {
                let Some(RefOr::T(resp)) = op.responses.responses.get_mut(status) else {
                    continue;
                };
                for (name, operation_id) in [
                    ("GetDecision", "get_decision"),
                    ("AwaitDecision", "await_decision"),
                    ("DecisionEvents", "decision_events"),
                    ("CancelDecision", "cancel_decision"),
                ] {
                    let link = LinkBuilder::new()
                        .operation_id(operation_id)
                        .parameter("id", "$response.body#/decision_id")
                        .description(format!(
                            "The `decision_id` of the handle is the `id` of `{operation_id}`."
                        ))
                        .build();
                    resp.links.insert(name.to_string(), RefOr::T(link));
                }
            }
        }
        // A cancel may have no body at all.
        if let Some(RefOr::T(body)) = paths
            .get_mut("/v1/decisions/{id}/cancel")
            .and_then(|p| p.post.as_mut())
            .and_then(|op| op.request_body.as_mut())
        {
            body.required = Some(Required::False);
        }
    }
}

const DESCRIPTION: &str = "A self-hosted decision service for AI agents: an agent asks a \
question, a person answers it from their phone, and the agent gets the answer back.\n\n\
Create a decision with `POST /v1/decisions`, share or let sayso send its `web_url`, then wait \
with `GET /v1/decisions/{id}/await` (call again while `status` is `pending`).\n\n\
Every error has one shape, `{\"error\": {\"code\", \"message\", \"details\"}}`; branch on \
`code`. A body that is not JSON is `400 bad_request`; JSON of the wrong shape is \
`422 validation_failed` with every problem in `details`, each with its JSON path. Fields \
sayso does not know are accepted and reported in `warnings`.";

// ---- Paths served elsewhere (other modules), described here ----

/// Server-Sent Events: one `decision.resolved` event, the Decision as data, per resolution
/// in the key's inbox, each with an `id:`; reconnect with `Last-Event-ID` to miss none.
/// Comments keep the connection alive.
#[utoipa::path(
    get, path = "/v1/events", tag = "events", operation_id = "stream_events",
    security(("bearer" = [])),
    params(
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id."),
    ),
    responses(
        (status = 200, description = "An endless event stream.", content_type = "text/event-stream", body = String,
         example = "id: 42\nevent: decision.resolved\ndata: {\"decision_id\": \"01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c\", \"status\": \"answered\", …}\n\n"),
        KeyedRefusals,
    )
)]
#[allow(dead_code)]
fn decision_stream() {}

/// Actions used today and this month (UTC), and the daily quota.
#[utoipa::path(
    get, path = "/v1/usage", tag = "usage", operation_id = "get_usage",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Actions used (a create costs 2) and the daily quota.", body = crate::service::UsageView),
        KeyedRefusals,
    )
)]
#[allow(dead_code)]
fn usage() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_names_the_uses_and_their_event() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let uses = &doc["paths"]["/v1/allowances/{id}/uses"];
        assert!(
            uses["post"].is_object() && uses["get"].is_object(),
            "{uses}"
        );
        let kinds = doc["components"]["schemas"]["EventKind"].to_string();
        assert!(kinds.contains("\"allowance_used\""), "{kinds}");
    }
}
