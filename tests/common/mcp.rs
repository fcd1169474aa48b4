//! rmcp's client on a test server's `/mcp`, and the tool calls it makes.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::server::TestServer;

pub type Client = RunningService<RoleClient, ()>;

/// rmcp's client on the server's `/mcp` with `key`.
pub async fn connect_with(srv: &TestServer, key: &str) -> Result<Client, String> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(srv.url("/mcp")).auth_header(key),
    );
    ().serve(transport).await.map_err(|e| e.to_string())
}

/// Calls the tool `name` with `args` (an object); panics when the call itself fails.
pub async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e}"))
}
