//! MCP (docs/MCP.md): the agent API as MCP tools over streamable HTTP at `/mcp`, one
//! endpoint per ask tool agents already know (`/mcp/omp`, `/mcp/gemini`, `/mcp/claude`,
//! `/mcp/pi`: src/mcp/profiles), and the `sayso mcp` stdio bridge for clients that only start
//! stdio servers.
//!
//! The HTTP side is stateless (no MCP session is kept between requests), so any replica can
//! serve any request. An axum middleware in front authenticates the API key and puts the
//! inbox into the request's extensions; the tools read it from there.
//!
//! Uses `web`, `service`, `render` and `domain`; never `http` or `notify`
//! (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod bridge;
mod handler;
pub mod profiles;
mod results;
mod shaped;
mod tools;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::service::Service;
use crate::web::CREATE_BODY_LIMIT;
use crate::web::error::ApiError;
use crate::web::extract::Auth;

pub use handler::SaysoMcp;
pub use profiles::Profile;

/// How often an open response stream gets a keep-alive comment, so proxies do not cut a
/// tool call that waits for a person.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// How the MCP endpoint is set up; `app` makes it from the command line.
#[derive(Debug, Clone, Default)]
pub struct McpSettings {
    /// `Host` values `/mcp` answers to (`*`: any); empty means the public URL's host and
    /// loopback.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed besides the public URL's (`*`: any).
    pub allowed_origins: Vec<String>,
    /// oh-my-pi's `ask.timeout` for `/mcp/omp`: after it, the recommended (else first)
    /// option is chosen. `None` (or zero) waits for the person.
    pub omp_ask_timeout: Option<std::time::Duration>,
}

/// The `/mcp` endpoint and the profiles' (`/mcp/omp`, …), behind the API-key check.
pub fn routes(svc: &Service, settings: &McpSettings) -> Router<Service> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_sse_keep_alive(Some(KEEP_ALIVE))
        .with_max_request_body_bytes(CREATE_BODY_LIMIT);
    let hosts = allowed_hosts(&svc.settings().public_url, &settings.allowed_hosts);
    let config = match hosts {
        Some(hosts) => config.with_allowed_hosts(hosts),
        None => config.disable_allowed_hosts(),
    };
    let mut router = Router::new();
    for profile in std::iter::once(Profile::Hosted).chain(Profile::NAMED) {
        let tools = SaysoMcp::with_profile(svc.clone(), profile, settings.omp_ask_timeout);
        let mcp = StreamableHttpService::new(
            move || Ok(tools.clone()),
            NeverSessionManager::default().into(),
            config.clone(),
        );
        router = router.nest_service(&profile.path(), mcp);
    }
    let origins = AllowedOrigins::new(&svc.settings().public_url, &settings.allowed_origins);
    router
        .layer(middleware::from_fn_with_state(svc.clone(), require_key))
        .layer(middleware::from_fn_with_state(origins, require_origin))
}

/// The browser origins `/mcp` answers. A web page may not call it from elsewhere: the MCP
/// transport requires servers to check `Origin` against DNS rebinding.
#[derive(Debug, Clone)]
struct AllowedOrigins {
    any: bool,
    origins: Vec<url::Origin>,
}

impl AllowedOrigins {
    fn new(public_url: &str, configured: &[String]) -> Self {
        let configured: Vec<&str> = configured
            .iter()
            .map(|o| o.trim())
            .filter(|o| !o.is_empty())
            .collect();
        let origins = std::iter::once(public_url)
            .chain(configured.iter().copied())
            .filter_map(|o| url::Url::parse(o).ok())
            .map(|u| u.origin())
            .filter(url::Origin::is_tuple)
            .collect();
        AllowedOrigins {
            any: configured.contains(&"*"),
            origins,
        }
    }

    fn allows(&self, origin: &str) -> bool {
        self.any || url::Url::parse(origin).is_ok_and(|u| self.origins.contains(&u.origin()))
    }
}

/// Refuses a request whose `Origin` is not allowed, with a 403 that says how to allow it.
async fn require_origin(
    State(origins): State<AllowedOrigins>,
    req: Request,
    next: Next,
) -> Response {
    let Some(origin) = req.headers().get(axum::http::header::ORIGIN) else {
        return next.run(req).await;
    };
    let origin = origin.to_str().unwrap_or("(not text)");
    if origins.allows(origin) {
        return next.run(req).await;
    }
    ApiError::new(
        axum::http::StatusCode::FORBIDDEN,
        "origin_not_allowed",
        format!(
            "a page at {origin:?} may not call /mcp; allow its origin with \
             SAYSO_MCP_ALLOWED_ORIGINS (comma-separated, * for any)"
        ),
    )
    .into_response()
}

/// Refuses a request without a valid API key (401 in the API's error shape); otherwise hands
/// the key's inbox to the tools through the request's extensions.
async fn require_key(Auth(inbox): Auth, mut req: Request, next: Next) -> Response {
    req.extensions_mut().insert(inbox);
    next.run(req).await
}

/// The `Host` values `/mcp` answers to: `configured` when given (`*` alone: any host),
/// else the public URL's host and loopback. `None` means any host.
pub fn allowed_hosts(public_url: &str, configured: &[String]) -> Option<Vec<String>> {
    let configured: Vec<String> = configured
        .iter()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect();
    if configured.iter().any(|h| h == "*") {
        return None;
    }
    if !configured.is_empty() {
        return Some(configured);
    }
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    if let Some(host) = url::Url::parse(public_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_string()))
        && !hosts.contains(&host)
    {
        hosts.push(host);
    }
    Some(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_host_and_loopback_are_allowed_by_default() {
        let hosts = allowed_hosts("https://ask.example.com", &[]).unwrap();
        assert_eq!(hosts, ["localhost", "127.0.0.1", "::1", "ask.example.com"]);
        let hosts = allowed_hosts("http://127.0.0.1:8080", &[]).unwrap();
        assert_eq!(hosts, ["localhost", "127.0.0.1", "::1"]);
    }

    #[test]
    fn origins_are_the_public_urls_and_the_configured_ones() {
        let o = AllowedOrigins::new("https://ask.example.com", &["http://localhost:6274".into()]);
        assert!(o.allows("https://ask.example.com"));
        assert!(o.allows("https://ask.example.com:443"));
        assert!(o.allows("http://localhost:6274"));
        assert!(!o.allows("http://ask.example.com"));
        assert!(!o.allows("https://evil.example"));
        assert!(!o.allows("null"));
        assert!(!o.allows("not a url"));
        let any = AllowedOrigins::new("https://ask.example.com", &["*".into()]);
        assert!(any.allows("https://evil.example"));
    }

    #[test]
    fn configured_hosts_replace_the_default() {
        let hosts = allowed_hosts(
            "https://ask.example.com",
            &["a.example.com".into(), " b.example.com:8443 ".into()],
        )
        .unwrap();
        assert_eq!(hosts, ["a.example.com", "b.example.com:8443"]);
        assert_eq!(allowed_hosts("https://x.example.com", &["*".into()]), None);
    }
}
