//! A server in front of the real sayso that speaks its API and forwards everything, the
//! server's answers rewritten as a test sets it to: something posing as sayso between the
//! hook and the server.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::Value;

/// What a relay does to what passes through it.
pub trait Rewrite: Clone + Send + 'static {
    /// The answer (status, body) to give `asked` without forwarding it, if any.
    fn instead(&self, _asked: &Asked) -> Option<(u16, Value)> {
        None
    }

    /// Rewrites the server's answer (`status`, `json`) to `asked`.
    fn rewrite(self, asked: &Asked, status: &mut u16, json: &mut Value);
}

/// A request as the relay received it.
pub struct Asked {
    pub method: Method,
    pub path: String,
    query: Vec<(String, String)>,
}

impl Asked {
    /// The query parameter `name`, if the request has it.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    /// Whether it reads one decision (neither its receipt nor its events).
    pub fn reads_a_decision(&self) -> bool {
        self.method == "GET"
            && self.path.starts_with("/v1/decisions/")
            && !self.path.ends_with("/receipt")
            && !self.path.ends_with("/events")
    }
}

pub struct Relay<R> {
    addr: SocketAddr,
    rewrite: Arc<Mutex<R>>,
}

type Shared<R> = Arc<(String, Arc<Mutex<R>>, reqwest::Client)>;

impl<R: Rewrite + Default + Sync> Relay<R> {
    /// A relay to `upstream`, rewriting as `R::default()` says until it is `set` otherwise.
    pub async fn start(upstream: &str) -> Relay<R> {
        let rewrite = Arc::new(Mutex::new(R::default()));
        let state = (
            upstream.to_string(),
            rewrite.clone(),
            reqwest::Client::new(),
        );
        let app = Router::new()
            .fallback(relay::<R>)
            .with_state(Arc::new(state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Relay { addr, rewrite }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set(&self, rewrite: R) {
        *self.rewrite.lock().unwrap() = rewrite;
    }
}

async fn relay<R: Rewrite>(State(state): State<Shared<R>>, req: Request) -> Response {
    let (upstream, rewrite, client) = &*state;
    let rewrite = rewrite.lock().unwrap().clone();
    let asked = Asked {
        method: req.method().clone(),
        path: req.uri().path().to_string(),
        query: req
            .uri()
            .query()
            .map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default(),
    };
    let (status, json) = match rewrite.instead(&asked) {
        // Answered here, the request never reaches the server.
        Some(answer) => answer,
        None => {
            let target = format!(
                "{upstream}{}",
                req.uri().path_and_query().map_or("/", |p| p.as_str())
            );
            let mut out = client.request(asked.method.clone(), target);
            for name in ["authorization", "content-type", "idempotency-key", "accept"] {
                if let Some(v) = req.headers().get(name) {
                    out = out.header(name, v);
                }
            }
            let body = to_bytes(req.into_body(), 16 << 20).await.unwrap();
            let answer = out.body(body).send().await.unwrap();
            let mut status = answer.status().as_u16();
            let mut json: Value = answer.json().await.unwrap_or(Value::Null);
            rewrite.rewrite(&asked, &mut status, &mut json);
            (status, json)
        }
    };
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json")
        .body(Body::from(json.to_string()))
        .unwrap()
}
