//! The OpenAPI document (`/openapi.json`) and the docs page (`/docs`): the document is valid
//! OpenAPI 3.1 (checked by `openapi-spec-validator`), covers every endpoint with the one error
//! shape, real responses validate against its own schemas (the `jsonschema` crate), and
//! schemathesis fuzzing a real server from it finds no 5xx and no response that breaks it.
//! The Python tools come from PyPI into a venv under `target/`; without Python, venv or
//! network the tests that need them say SKIPPED, except in CI (`CI` set), where they fail.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use common::browser::Browser;
use common::server::{TestServer, fresh_server, s, send};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Every operation the document must describe, with the error statuses it must list.
const OPERATIONS: &[(&str, &str, &[u16])] = &[
    (
        "post",
        "/v1/decisions",
        &[200, 201, 400, 401, 413, 422, 429, 503],
    ),
    ("get", "/v1/decisions", &[200, 401, 422, 429, 503]),
    ("get", "/v1/decisions/{id}", &[200, 401, 404, 429, 503]),
    (
        "get",
        "/v1/decisions/{id}/await",
        &[200, 401, 404, 422, 429, 503],
    ),
    (
        "post",
        "/v1/decisions/{id}/cancel",
        &[200, 400, 401, 404, 409, 413, 422, 429, 503],
    ),
    (
        "get",
        "/v1/decisions/{id}/events",
        &[200, 401, 404, 429, 503],
    ),
    (
        "post",
        "/d/{token}",
        &[200, 400, 404, 409, 410, 413, 422, 429, 503],
    ),
    (
        "get",
        "/v1/decisions/{id}/receipt",
        &[200, 401, 404, 409, 429, 503],
    ),
    ("get", "/v1/receipts", &[200, 401, 422, 429, 503]),
    ("get", "/v1/receipts/key", &[200, 429, 503]),
    ("get", "/v1/events", &[200, 401, 429, 503]),
    ("get", "/v1/usage", &[200, 401, 429, 503]),
    ("get", "/healthz", &[200]),
    ("get", "/readyz", &[200, 503]),
];

async fn document(srv: &TestServer) -> Value {
    let resp = srv
        .client
        .get(srv.url("/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let ct = resp.headers()[reqwest::header::CONTENT_TYPE]
        .to_str()
        .unwrap();
    assert!(ct.starts_with("application/json"), "{ct}");
    resp.json().await.unwrap()
}

/// Follows a local `$ref` (`#/components/…`) once.
fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str() {
        Some(r) => doc
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling $ref {r}")),
        None => v,
    }
}

#[tokio::test]
async fn the_document_describes_every_endpoint_with_the_one_error_shape() {
    let (_db, srv) = fresh_server().await;
    let doc = document(&srv).await;

    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    assert_eq!(doc["info"]["title"], "sayso");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["info"]["license"]["identifier"], "MIT");
    assert!(!doc["info"]["description"].as_str().unwrap().is_empty());
    let bearer = &doc["components"]["securitySchemes"]["bearer"];
    assert_eq!(
        (bearer["type"].as_str(), bearer["scheme"].as_str()),
        (Some("http"), Some("bearer"))
    );

    for (method, path, statuses) in OPERATIONS {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not in the document");
        for status in *statuses {
            let resp = deref(&doc, &op["responses"][status.to_string()]);
            assert!(resp.is_object(), "{method} {path} does not list {status}");
            if *status >= 400 && resp["content"]["application/json"].is_object() {
                let media = &resp["content"]["application/json"];
                assert_eq!(
                    media["schema"]["$ref"], "#/components/schemas/Error",
                    "{method} {path} {status} is not the error shape"
                );
                assert!(
                    media["example"].is_object(),
                    "{method} {path} {status} has no example"
                );
            }
        }
        // The receipt key is public: a client pins it before it holds anything else.
        if path.starts_with("/v1/") && *path != "/v1/receipts/key" {
            assert_eq!(op["security"], json!([{"bearer": []}]), "{method} {path}");
        }
    }
    // Requests carry examples; the agent's create one per kind.
    let create = &doc["paths"]["/v1/decisions"]["post"];
    let examples = &create["requestBody"]["content"]["application/json"]["examples"];
    for kind in ["bool", "choose", "text", "form", "todo"] {
        assert!(examples[kind]["value"].is_object(), "no {kind} example");
    }
    // Who is asked, and how many must agree.
    let fields = &doc["components"]["schemas"]["CreateDecision"]["properties"];
    for field in [
        "approvers",
        "required",
        "escalate_after_s",
        "escalate_to",
        "urgent",
    ] {
        assert!(
            fields[field]["description"].is_string(),
            "CreateDecision does not document {field}"
        );
    }
    assert_eq!(fields["required"]["minimum"], 1);
    let idempotency = create["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Idempotency-Key")
        .expect("Idempotency-Key is documented");
    assert_eq!(idempotency["in"], "header");
    assert!(create["responses"]["201"]["headers"]["Location"].is_object());
    // Links from a create's handle to the operations on the decision: what schemathesis's
    // stateful phase follows. Each names an operation of the document, with its `id`.
    let operation_ids: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|p| p.as_object().unwrap().values())
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    for status in ["200", "201"] {
        let links = create["responses"][status]["links"].as_object();
        let links = links.unwrap_or_else(|| panic!("create {status} declares no links"));
        let mut targets: Vec<&str> = links
            .values()
            .map(|l| l["operationId"].as_str().unwrap())
            .collect();
        targets.sort_unstable();
        assert_eq!(
            targets,
            [
                "await_decision",
                "cancel_decision",
                "decision_events",
                "get_decision"
            ]
        );
        for link in links.values() {
            let target = link["operationId"].as_str().unwrap();
            assert!(operation_ids.contains(&target), "no operation {target}");
            assert_eq!(link["parameters"]["id"], "$response.body#/decision_id");
        }
    }
    let list_params: Vec<&str> = doc["paths"]["/v1/decisions"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        list_params,
        ["status", "kind", "project", "limit", "cursor"]
    );
    let stream = &doc["paths"]["/v1/events"]["get"]["responses"]["200"]["content"];
    assert!(stream["text/event-stream"].is_object(), "{stream}");

    if let Some(python) = python_tools() {
        let file = std::env::temp_dir().join(format!("sayso-openapi-{}.json", std::process::id()));
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = Command::new(python)
            .args(["-m", "openapi_spec_validator"])
            .arg(&file)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&file);
        assert!(
            out.status.success(),
            "openapi-spec-validator refuses the document:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    srv.stop().await;
}

/// Asserts that `instance` validates against `#/components/schemas/{name}` of `doc`.
fn assert_matches(doc: &Value, name: &str, instance: &Value) {
    let mut schema = doc.clone();
    let root = schema.as_object_mut().unwrap();
    root.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("$ref".into(), json!(format!("#/components/schemas/{name}")));
    let validator = jsonschema::validator_for(&schema).expect("the document's schemas compile");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name} does not match {instance}:\n{}",
        errors.join("\n")
    );
}

#[tokio::test]
async fn real_responses_match_the_documents_own_schemas() {
    let (_db, srv) = fresh_server().await;
    let doc = document(&srv).await;

    // The document's own request examples are accepted, and each handle matches.
    let examples = doc["paths"]["/v1/decisions"]["post"]["requestBody"]["content"]
        ["application/json"]["examples"]
        .as_object()
        .unwrap()
        .clone();
    let mut handles = Vec::new();
    for (kind, example) in &examples {
        let resp = srv
            .req(Method::POST, "/v1/decisions")
            .json(&example["value"])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED, "the {kind} example");
        let location = resp.headers()["location"].to_str().unwrap().to_string();
        let handle: Value = resp.json().await.unwrap();
        assert_eq!(
            location,
            format!("/v1/decisions/{}", s(&handle, "decision_id"))
        );
        assert_matches(&doc, "AskHandle", &handle);
        handles.push((kind.clone(), handle));
    }
    let (_, bool_handle) = handles.iter().find(|(k, _)| k == "bool").unwrap();
    let id = s(bool_handle, "decision_id");

    assert_matches(&doc, "Decision", &srv.get(id).await);
    let (status, list) = send(srv.req(Method::GET, "/v1/decisions?limit=2")).await;
    assert_eq!(status, StatusCode::OK);
    assert_matches(&doc, "ListPage", &list);
    assert!(
        list["next"].is_string(),
        "five decisions make a second page of two"
    );

    // Answered through the link, as the document's example says.
    let answer = &doc["paths"]["/d/{token}"]["post"]["requestBody"]["content"]["application/json"]
        ["examples"]["yes"]["value"];
    let result = srv
        .answer_ok(s(bool_handle, "web_url"), answer.clone())
        .await;
    assert_matches(&doc, "AnswerResult", &result);
    let (status, answered) = srv.await_decision(id, 0).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answered["status"], "answered");
    assert_matches(&doc, "Decision", &answered);
    let (status, events) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_matches(&doc, "EventList", &events);
    let (status, receipt) =
        send(srv.req(Method::GET, &format!("/v1/decisions/{id}/receipt"))).await;
    assert_eq!(status, StatusCode::OK, "{receipt}");
    assert_matches(&doc, "SignedReceipt", &receipt);
    assert_matches(&doc, "Receipt", &receipt["receipt"]);
    let (status, chain) = send(srv.req(Method::GET, "/v1/receipts")).await;
    assert_eq!(status, StatusCode::OK, "{chain}");
    assert_matches(&doc, "ReceiptList", &chain);
    let (status, key) = send(srv.client.get(srv.url("/v1/receipts/key"))).await;
    assert_eq!(status, StatusCode::OK, "{key}");
    assert_matches(&doc, "ReceiptKeyView", &key);

    // Cancelled, with and without a reason.
    let (_, text_handle) = handles.iter().find(|(k, _)| k == "text").unwrap();
    let cancel = format!("/v1/decisions/{}/cancel", s(text_handle, "decision_id"));
    let (status, cancelled) = send(
        srv.req(Method::POST, &cancel)
            .json(&json!({"reason": "fixed it myself"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_matches(&doc, "Decision", &cancelled);

    // Every error is the one error shape.
    let (_, choose_handle) = handles.iter().find(|(k, _)| k == "choose").unwrap();
    let pending = format!("/v1/decisions/{}/receipt", s(choose_handle, "decision_id"));
    let errors = [
        (srv.req(Method::GET, &pending), StatusCode::CONFLICT),
        (srv.req(Method::POST, &cancel), StatusCode::CONFLICT),
        (
            srv.client.get(srv.url("/v1/decisions")),
            StatusCode::UNAUTHORIZED,
        ),
        (
            srv.req(
                Method::GET,
                "/v1/decisions/01968a2e-7c1a-7b3e-9f42-5d0c6e8a1b2c",
            ),
            StatusCode::NOT_FOUND,
        ),
        (
            srv.req(Method::POST, "/v1/decisions").body("{not json"),
            StatusCode::BAD_REQUEST,
        ),
        (
            srv.req(Method::POST, "/v1/decisions")
                .json(&json!({"kind": "poll"})),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            srv.client
                .post(s(bool_handle, "web_url"))
                .json(&json!({"action": "decline"})),
            StatusCode::CONFLICT,
        ),
    ];
    for (req, expected) in errors {
        let (status, body) = send(req).await;
        assert_eq!(status, expected, "{body}");
        assert_matches(&doc, "Error", &body);
    }
    srv.stop().await;
}

#[tokio::test]
async fn the_docs_page_is_served_from_this_server_alone() {
    let (_db, srv) = fresh_server().await;

    let resp = srv.client.get(srv.url("/docs/")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    let html = resp.text().await.unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );
    let init = srv
        .page_text(&srv.url("/docs/swagger-initializer.js"))
        .await;
    assert!(init.contains("\"/openapi.json\""), "{init}");
    assert!(init.contains("\"validatorUrl\": \"none\""), "{init}");

    // A real browser draws every operation, loading nothing from another host.
    let Some(browser) = Browser::start().await else {
        return srv.stop().await;
    };
    browser.goto(&srv.url("/docs/")).await;
    browser.wait_for(".opblock").await;
    let drawn = browser
        .js(
            "return document.querySelectorAll('.opblock').length",
            vec![],
        )
        .await;
    assert!(
        drawn.as_u64().unwrap() >= OPERATIONS.len() as u64,
        "{drawn} operations drawn"
    );
    let loaded = browser
        .js(
            "return performance.getEntriesByType('resource').map(e => e.name)",
            vec![],
        )
        .await;
    let loaded: Vec<&str> = loaded
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        loaded.iter().any(|u| u.ends_with("/openapi.json")),
        "{loaded:?}"
    );
    for url in &loaded {
        assert!(
            url.starts_with(&srv.base) || url.starts_with("data:"),
            "loaded {url}"
        );
    }
    browser.close().await;
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn schemathesis_finds_no_server_error_and_no_response_off_the_document() {
    let (_db, srv) = fresh_server().await;
    let Some(python) = python_tools() else {
        return srv.stop().await;
    };
    let schemathesis = python.with_file_name("schemathesis");
    let mut cmd = Command::new(schemathesis);
    // Its cache goes to `.schemathesis/` in the working directory: keep it under target/.
    cmd.current_dir(env!("CARGO_TARGET_TMPDIR"));
    cmd.arg("--config-file")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/schemathesis.toml"
        ))
        .arg("--no-color")
        .arg("run")
        .arg(srv.url("/openapi.json"))
        .args(["--header", &format!("Authorization: Bearer {}", srv.key)])
        // Every check runs but those tests/schemathesis.toml turns off, each with its reason.
        .args([
            "--max-examples",
            "50",
            "--seed",
            "20260504",
            "--request-timeout",
            "20",
        ])
        .args(["--max-failures", "20"])
        // An endless stream: nothing to fuzz in a request that never ends.
        .args(["--exclude-path", "/v1/events"]);
    // Documented ahead of the handler landing on this branch: fuzz it once it is served.
    let usage = send(srv.req(Method::GET, "/v1/usage")).await;
    if usage.0 == StatusCode::NOT_FOUND && usage.1["error"]["message"] == "no such endpoint" {
        eprintln!("NOTE: /v1/usage is not served yet; schemathesis leaves it out");
        cmd.args(["--exclude-path", "/v1/usage"]);
    }
    let handle = srv
        .create(json!({"question": "Which database?", "kind": "choose",
                       "options": ["PostgreSQL", "SQLite"], "notify": "none"}))
        .await;
    let token = s(&handle, "web_url")
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    cmd.env("SAYSO_TEST_TOKEN", token);
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.stdin(Stdio::null()).output().unwrap())
        .await
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = report.find("SUMMARY").map_or("", |i| &report[i..]);
    eprintln!("schemathesis took {:?}\n{summary}", started.elapsed());
    assert!(
        out.status.success(),
        "schemathesis found problems:\n{report}"
    );
    assert!(
        report.contains("Stateful"),
        "the stateful phase ran:\n{report}"
    );
    srv.stop().await;
}

/// The venv's Python with schemathesis and openapi-spec-validator (see `common::python`).
fn python_tools() -> Option<&'static PathBuf> {
    static VENV: common::python::Venv = common::python::Venv::new(
        "schemathesis-venv",
        "schemathesis, openapi_spec_validator",
        &["schemathesis", "openapi-spec-validator"],
        "schemathesis and openapi-spec-validator",
    );
    VENV.python()
}
