//! `sayso mcp`: an MCP server on stdin/stdout that forwards every request to a sayso server's
//! `/mcp` (or, with `--profile`, a profile's endpoint such as `/mcp/omp`), for clients that
//! only start stdio servers. The tools, their schemas and their
//! results are the remote server's own, so both ways of connecting behave the same.
//!
//! stdout carries the protocol: nothing else may be written there (logs go to stderr).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::Mutex;

use super::handler::server_config;
use super::profiles::Profile;
use super::tools;

type Remote = RunningService<RoleClient, ClientConfig>;

/// Serves the bridge on stdin/stdout until the client closes it.
pub async fn run(server: &str, key: &str, profile: &str) -> Result<(), String> {
    let profile = Profile::parse(profile).map_err(|e| format!("--profile: {e}"))?;
    let bridge = Bridge::new(server, key, profile)?;
    tracing::info!(remote = %bridge.url, "sayso mcp: forwarding stdio to the server");
    let running = bridge
        .clone()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP client on stdin did not start a session: {e}"))?;
    let _ = running.waiting().await;
    if let Some(remote) = bridge.remote.lock().await.take() {
        let _ = remote.cancel().await;
    }
    Ok(())
}

/// The stdio server: a client of the remote `/mcp`, connected on first use and again after
/// the connection is lost.
#[derive(Clone)]
pub struct Bridge {
    url: String,
    profile: Profile,
    key: String,
    remote: Arc<Mutex<Option<Remote>>>,
}

impl Bridge {
    /// A bridge to `profile`'s endpoint of the sayso server at `server` (its base URL, or
    /// its `/mcp` URL).
    pub fn new(server: &str, key: &str, profile: Profile) -> Result<Bridge, String> {
        let key = key.trim();
        if key.is_empty() {
            return Err("an API key is needed: --key sk_… or SAYSO_KEY".into());
        }
        let key = key.strip_prefix("Bearer ").unwrap_or(key).to_string();
        let parsed = url::Url::parse(server.trim())
            .map_err(|e| format!("--server {server:?} is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("--server must start with http:// or https://".into());
        }
        Ok(Bridge {
            url: mcp_url(server, profile),
            profile,
            key,
            remote: Arc::new(Mutex::new(None)),
        })
    }

    /// The remote's peer, connecting when there is no live connection.
    async fn peer(&self) -> Result<Peer<RoleClient>, String> {
        let mut remote = self.remote.lock().await;
        if let Some(r) = remote.as_ref()
            && !r.is_closed()
            && !r.peer().is_transport_closed()
        {
            return Ok(r.peer().clone());
        }
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(self.url.as_str())
                .auth_header(self.key.clone()),
        );
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("sayso-mcp-bridge", env!("CARGO_PKG_VERSION")),
        );
        let connected = info.serve(transport).await.map_err(|e| {
            tracing::warn!(error = %e, remote = %self.url, "connecting to the sayso server failed");
            format!(
                "cannot reach the sayso server at {} (is it running, and is the key right?)",
                self.url
            )
        })?;
        let peer = connected.peer().clone();
        *remote = Some(connected);
        Ok(peer)
    }

    /// Forgets the connection, so the next call connects anew.
    async fn reset(&self) {
        if let Some(r) = self.remote.lock().await.take() {
            let _ = r.cancel().await;
        }
    }
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        server_config(self.profile)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listed = match self.peer().await {
            Ok(peer) => peer.list_tools(request).await.map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        match listed {
            Ok(list) => Ok(list),
            Err(e) => {
                // The same tools as this build serves; calling one says why the server is
                // out of reach.
                tracing::warn!(error = %e, "listing the remote tools failed; listing this build's");
                self.reset().await;
                Ok(ListToolsResult::with_all_items(tools::of(self.profile)))
            }
        }
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Progress tokens and the like belong to the stdio session, not the remote one.
        request.meta = None;
        let peer = match self.peer().await {
            Ok(peer) => peer,
            Err(e) => return Ok(unreachable_result(&e).into()),
        };
        let called = tokio::select! {
            called = peer.call_tool_once(request) => called,
            () = context.ct.cancelled() => {
                // The client gave up on the call (or closed stdin). Dropping the remote call
                // cancels it there too, which closes its request: the server then withdraws
                // a question the call was waiting on. Other calls keep the connection.
                return Err(ErrorData::internal_error("the client cancelled the call", None));
            }
        };
        match called {
            Ok(response) => Ok(response),
            Err(rmcp::service::ServiceError::McpError(e)) => Err(e),
            Err(e) => {
                tracing::warn!(error = %e, "forwarding a tool call failed");
                self.reset().await;
                Ok(unreachable_result(&format!(
                    "the sayso server at {} did not complete the call: {e}",
                    self.url
                ))
                .into())
            }
        }
    }
}

fn unreachable_result(why: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{why}. If a question was being asked, it may have been created: check with \
         list_todos or ask again later."
    ))])
}

/// The profile's endpoint under the server's base URL (which may already end in `/mcp`).
fn mcp_url(server: &str, profile: Profile) -> String {
    let base = server.trim().trim_end_matches('/');
    let base = base.strip_suffix("/mcp").unwrap_or(base);
    format!("{base}{}", profile.path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_is_the_servers_mcp_endpoint() {
        let hosted = Profile::Hosted;
        assert_eq!(
            mcp_url("http://127.0.0.1:8080", hosted),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            mcp_url("https://ask.example.com/", hosted),
            "https://ask.example.com/mcp"
        );
        assert_eq!(
            mcp_url("https://ask.example.com/mcp", hosted),
            "https://ask.example.com/mcp"
        );
        assert_eq!(
            mcp_url("https://ask.example.com/mcp/", Profile::Omp),
            "https://ask.example.com/mcp/omp"
        );
    }

    #[test]
    fn a_bridge_needs_a_key_and_an_http_url() {
        let p = Profile::Hosted;
        assert!(Bridge::new("http://localhost:8080", "", p).is_err());
        assert!(Bridge::new("ftp://localhost", "sk_x", p).is_err());
        assert!(Bridge::new("localhost:8080", "sk_x", p).is_err());
        let b = Bridge::new("http://localhost:8080", "Bearer sk_x", p).unwrap();
        assert_eq!(b.key, "sk_x");
    }
}
