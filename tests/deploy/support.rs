//! What the deployment tests do through a proxy: ask, answer, read the event stream, call MCP.

use std::time::Duration;

use reqwest::StatusCode;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::stack::Stack;

/// Asks a yes/no question through the proxy; returns the handle.
pub async fn ask(stack: &Stack, question: &str) -> Value {
    let resp = stack
        .client()
        .post(stack.url("/v1/decisions"))
        .bearer_auth(&stack.sayso.key)
        .json(&json!({"question": question, "kind": "bool", "ttl_minutes": 30}))
        .send()
        .await
        .expect("create sent through the proxy");
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or_default();
    assert_eq!(status, StatusCode::CREATED, "create: {body}");
    body
}

/// Answers yes on the answer page's link, through the proxy, as the phone does.
pub async fn answer_yes(stack: &Stack, handle: &Value) {
    let web_url = handle["web_url"].as_str().unwrap();
    assert!(
        web_url.starts_with(&stack.public),
        "the link is on the public URL: {web_url}"
    );
    let resp = stack
        .client()
        .post(web_url)
        .json(&json!({"value": "yes"}))
        .send()
        .await
        .expect("answer sent through the proxy");
    assert_eq!(resp.status(), StatusCode::OK, "{:?}", resp.text().await);
}

/// `GET /v1/events` through the proxy, read event by event as the bytes arrive.
pub struct Events {
    resp: reqwest::Response,
    buf: String,
}

impl Events {
    pub async fn open(stack: &Stack) -> Events {
        let resp = stack
            .client()
            .get(stack.url("/v1/events"))
            .bearer_auth(&stack.sayso.key)
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("event stream opened through the proxy");
        assert_eq!(resp.status(), StatusCode::OK);
        Events {
            resp,
            buf: String::new(),
        }
    }

    /// The data of the next `decision.resolved` event, which must come within `within`.
    pub async fn next_resolved(&mut self, within: Duration) -> Value {
        tokio::time::timeout(within, async {
            loop {
                while let Some(end) = self.buf.find("\n\n") {
                    let block: String = self.buf.drain(..end + 2).collect();
                    if block.lines().any(|l| l == "event: decision.resolved") {
                        let data: String = block
                            .lines()
                            .filter_map(|l| l.strip_prefix("data: "))
                            .collect();
                        return serde_json::from_str(&data).expect("the event's data is JSON");
                    }
                }
                let chunk = self
                    .resp
                    .chunk()
                    .await
                    .expect("the stream reads")
                    .expect("the stream stays open");
                self.buf.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no decision.resolved event within {within:?}"))
    }
}

/// rmcp's client on the public `/mcp`, through the proxy, with the stack's certificate.
pub async fn mcp(stack: &Stack) -> RunningService<RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(stack.url("/mcp"))
        .auth_header(&stack.sayso.key);
    let transport = StreamableHttpClientTransport::with_client(stack.client(), config);
    ().serve(transport)
        .await
        .expect("MCP connected through the proxy")
}

/// Calls a tool; its structured result (the Decision), which must not be an error.
pub async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> Value {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e}"));
    assert_ne!(result.is_error, Some(true), "{name}: {result:?}");
    result.structured_content.expect("structured content")
}
