//! The throughput scenarios: many clients at once for a bounded time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use serde_json::json;

use crate::server::Server;

/// Concurrent clients for the throughput scenarios.
pub const CONCURRENCY: usize = 64;

/// Runs `worker` `CONCURRENCY` times at once, each until the deadline it is given, counting
/// its completions on the counter it is given; returns completions per second.
async fn workers<W, Fut>(seconds: u64, worker: W) -> Result<f64>
where
    W: Fn(Instant, Arc<AtomicU64>) -> Fut,
    Fut: std::future::Future<Output = Result<()>> + Send + 'static,
{
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let running: Vec<_> = (0..CONCURRENCY)
        .map(|_| tokio::spawn(worker(deadline, Arc::clone(&done))))
        .collect();
    for w in running {
        w.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

/// Runs `op` from `CONCURRENCY` workers for `seconds` and returns completions per second.
pub async fn rate<F, Fut>(seconds: u64, op: F) -> Result<f64>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    workers(seconds, move |deadline, done| {
        let op = op.clone();
        async move {
            while Instant::now() < deadline {
                op().await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}

/// The request a throughput scenario sends over and over, and the status it must get.
#[derive(Clone)]
pub struct Repeated {
    pub url: String,
    pub method: hyper::Method,
    pub key: Option<String>,
    pub body: Option<serde_json::Value>,
    pub expect: hyper::StatusCode,
}

/// `CONCURRENCY` clients, each on a connection of its own, sending `req` for `seconds`:
/// completions per second.
pub async fn http1_rate(seconds: u64, req: Repeated) -> Result<f64> {
    let url: url::Url = req.url.parse()?;
    let host = url.host_str().unwrap_or("127.0.0.1").to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let authority = format!("{host}:{port}");
    let path = url.path().to_string();
    let body = bytes::Bytes::from(
        req.body
            .as_ref()
            .map(serde_json::to_vec)
            .transpose()?
            .unwrap_or_default(),
    );
    workers(seconds, move |deadline, done| {
        let (req, body) = (req.clone(), body.clone());
        let (authority, path) = (authority.clone(), path.clone());
        async move {
            let stream = tokio::net::TcpStream::connect(&authority).await?;
            stream.set_nodelay(true)?;
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
            tokio::spawn(conn);
            let bearer = req.key.as_ref().map(|k| format!("Bearer {k}"));
            while Instant::now() < deadline {
                let mut builder = hyper::Request::builder()
                    .method(req.method.clone())
                    .uri(&path)
                    .header(hyper::header::HOST, &authority);
                if let Some(bearer) = &bearer {
                    builder = builder.header(hyper::header::AUTHORIZATION, bearer);
                }
                if req.body.is_some() {
                    builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
                }
                let request = builder.body(http_body_util::Full::new(body.clone()))?;
                sender.ready().await?;
                let resp = sender.send_request(request).await?;
                let status = resp.status();
                http_body_util::BodyExt::collect(resp.into_body()).await?;
                if status != req.expect {
                    return Err(anyhow!("{} {} answered {status}", req.method, req.url));
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}

pub async fn create_rate(server: &Server, seconds: u64) -> Result<f64> {
    let r = http1_rate(
        seconds,
        Repeated {
            url: format!("{}/v1/decisions", server.base),
            method: hyper::Method::POST,
            key: Some(server.key.clone()),
            body: Some(
                json!({"question": "Deploy the build to staging?", "kind": "bool", "notify": "none"}),
            ),
            expect: hyper::StatusCode::CREATED,
        },
    )
    .await?;
    eprintln!("create: {r:.0}/s");
    Ok(r)
}

pub async fn get_rate(server: &Server, seconds: u64) -> Result<f64> {
    let h = server
        .create(&json!({"question": "Read me", "kind": "bool", "notify": "none"}))
        .await?;
    let r = http1_rate(
        seconds,
        Repeated {
            url: format!(
                "{}/v1/decisions/{}",
                server.base,
                h["decision_id"].as_str().unwrap_or("")
            ),
            method: hyper::Method::GET,
            key: Some(server.key.clone()),
            body: None,
            expect: hyper::StatusCode::OK,
        },
    )
    .await?;
    eprintln!("get: {r:.0}/s");
    Ok(r)
}

/// Decisions read in turn by `get_many_rate`: more than the server keeps views of (4 096), so
/// nearly every read finds no view of its row and decodes it, as after each change.
pub const MANY: usize = 10_000;

/// The URLs of `MANY` new decisions, asked 64 at a time.
pub async fn many_decisions(server: &Server) -> Result<Arc<Vec<String>>> {
    use futures::StreamExt;
    let ids: Vec<Result<String>> = futures::stream::iter(0..MANY)
        .map(|i| async move {
            let h = server
                .create(
                    &json!({"question": format!("Read me, {i}"), "kind": "bool", "notify": "none"}),
                )
                .await?;
            let id = h["decision_id"]
                .as_str()
                .ok_or_else(|| anyhow!("no decision_id in {h}"))?;
            Ok(format!("{}/v1/decisions/{id}", server.base))
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    Ok(Arc::new(ids.into_iter().collect::<Result<_>>()?))
}

/// Reads of `urls` in turn (`many_decisions`), completions per second.
pub async fn get_many_rate(server: &Server, urls: &Arc<Vec<String>>, seconds: u64) -> Result<f64> {
    let r = http1_rate_over(
        seconds,
        hyper::Method::GET,
        Some(server.key.clone()),
        Arc::clone(urls),
        None,
        false,
    )
    .await?;
    eprintln!("get, {MANY} in turn: {r:.0}/s");
    Ok(r)
}

/// `CONCURRENCY` clients, each on a connection of its own, sending `method` to the paths of
/// `urls` (all on one server) in turn for `seconds`: completions per second. With `once`,
/// each URL is sent once (an answer to each of many decisions) and the clients stop early
/// when none is left; otherwise they go round the list again.
pub async fn http1_rate_over(
    seconds: u64,
    method: hyper::Method,
    key: Option<String>,
    urls: Arc<Vec<String>>,
    body: Option<serde_json::Value>,
    once: bool,
) -> Result<f64> {
    let first: url::Url = urls.first().ok_or_else(|| anyhow!("no URLs"))?.parse()?;
    let host = first.host_str().unwrap_or("127.0.0.1").to_string();
    let port = first.port_or_known_default().unwrap_or(80);
    let authority = format!("{host}:{port}");
    let paths: Arc<Vec<String>> = Arc::new(
        urls.iter()
            .map(|u| Ok(u.parse::<url::Url>()?.path().to_string()))
            .collect::<Result<_>>()?,
    );
    let body = bytes::Bytes::from(
        body.as_ref()
            .map(serde_json::to_vec)
            .transpose()?
            .unwrap_or_default(),
    );
    let next = Arc::new(AtomicU64::new(0));
    workers(seconds, move |deadline, done| {
        let (method, key, body) = (method.clone(), key.clone(), body.clone());
        let (authority, paths, next) = (authority.clone(), Arc::clone(&paths), Arc::clone(&next));
        async move {
            let stream = tokio::net::TcpStream::connect(&authority).await?;
            stream.set_nodelay(true)?;
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
            tokio::spawn(conn);
            let bearer = key.as_ref().map(|k| format!("Bearer {k}"));
            while Instant::now() < deadline {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                if once && i >= paths.len() {
                    break;
                }
                let path = &paths[i % paths.len()];
                let mut builder = hyper::Request::builder()
                    .method(method.clone())
                    .uri(path)
                    .header(hyper::header::HOST, &authority);
                if let Some(bearer) = &bearer {
                    builder = builder.header(hyper::header::AUTHORIZATION, bearer);
                }
                if !body.is_empty() {
                    builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
                }
                let request = builder.body(http_body_util::Full::new(body.clone()))?;
                sender.ready().await?;
                let resp = sender.send_request(request).await?;
                let status = resp.status();
                http_body_util::BodyExt::collect(resp.into_body()).await?;
                if !status.is_success() {
                    return Err(anyhow!("{method} {path} answered {status}"));
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await
}
