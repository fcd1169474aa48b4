//! A real sayso server on port 0, in this process, on a fresh database.

#![allow(dead_code)]

use std::time::Duration;

use reqwest::{Client, Method, RequestBuilder, StatusCode};
use sayso::app::{AppSettings, ServeLimits, serve, start_worker};
use sayso::config::default_public_url;
use sayso::domain::PersonChannel;
use sayso::http::{HttpSettings, RateLimit};
use sayso::notify::NotifySettings;
use sayso::service::{ChannelChanges, PersonSettings, Service, ServiceSettings};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server with the `default` inbox and its key.
pub struct TestServer {
    pub base: String,
    pub key: String,
    pub svc: Service,
    pub client: Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// A server on a fresh SQLite database, which lives as long as the first of the pair.
pub async fn fresh_server() -> (crate::common::db::SqliteTestDb, TestServer) {
    let db = crate::common::db::fresh_sqlite_url();
    let srv = TestServer::start(&db.url).await;
    (db, srv)
}

/// A server on a fresh SQLite database that serves with `limits`, which lives as long as
/// the first of the pair.
pub async fn fresh_server_with(
    limits: ServeLimits,
) -> (crate::common::db::SqliteTestDb, TestServer) {
    let db = crate::common::db::fresh_sqlite_url();
    let srv = TestServer::start_with(&db.url, limits).await;
    (db, srv)
}

/// `TestServer::start_notifying` without email on a fresh SQLite database, which lives as
/// long as the first of the pair.
pub async fn fresh_notifying_server() -> (crate::common::db::SqliteTestDb, TestServer) {
    let db = crate::common::db::fresh_sqlite_url();
    let srv = TestServer::start_notifying(&db.url, None).await;
    (db, srv)
}

/// Installs the TLS provider reqwest needs (the build carries only ring).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// How a test server differs from the default one.
struct Setup {
    limits: ServeLimits,
    /// `Some` to run the outbox worker, with this SMTP URL if any.
    notify: Option<Option<String>>,
    rate_limit: RateLimit,
    /// The API key of an existing inbox; a fresh database makes its first one otherwise.
    key: Option<String>,
    max_await: Duration,
    allow_private_webhooks: bool,
    trusted_proxies: Vec<String>,
    omp_ask_timeout: Option<Duration>,
    /// Links name `localhost` rather than 127.0.0.1: WebAuthn takes no IP address as its
    /// relying party, so the passkey tests need a host name.
    localhost: bool,
    /// Listens on every interface (`0.0.0.0`), as `SAYSO_LISTEN=0.0.0.0:8080` does; links
    /// name this host (`SAYSO_PUBLIC_URL=http://HOST:PORT`), else 127.0.0.1.
    every_interface: Option<Option<String>>,
    /// Each person's notification budget per channel, and the span it counts over.
    budget: (u32, Duration),
    /// Slack, Matrix and Telegram, those set up.
    chats: sayso::chat::ChatSettings,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            limits: ServeLimits::default(),
            notify: None,
            rate_limit: RateLimit::DEFAULT,
            key: None,
            max_await: Duration::from_secs(600),
            allow_private_webhooks: true,
            trusted_proxies: vec![],
            omp_ask_timeout: None,
            localhost: false,
            every_interface: None,
            budget: (3, Duration::from_secs(60)),
            chats: Default::default(),
        }
    }
}

impl Setup {
    /// `start_chatting`'s: notifying without email, with no rate limit and no budget.
    fn chatting(chats: sayso::chat::ChatSettings) -> Setup {
        Setup {
            notify: Some(None),
            rate_limit: RateLimit::OFF,
            budget: (0, Duration::from_secs(60)),
            chats,
            ..Setup::default()
        }
    }
}

impl TestServer {
    pub async fn start(database_url: &str) -> TestServer {
        Self::start_with(database_url, ServeLimits::default()).await
    }

    pub async fn start_with(database_url: &str, limits: ServeLimits) -> TestServer {
        let setup = Setup {
            limits,
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server with its own rate limit.
    pub async fn start_rate_limited(database_url: &str, rate_limit: RateLimit) -> TestServer {
        let setup = Setup {
            rate_limit,
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A rate-limited server that believes the forwarding headers of `trusted_proxies`.
    pub async fn start_behind_proxies(
        database_url: &str,
        rate_limit: RateLimit,
        trusted_proxies: &[&str],
    ) -> TestServer {
        let setup = Setup {
            rate_limit,
            trusted_proxies: trusted_proxies.iter().map(|p| p.to_string()).collect(),
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server that, as by default, calls public addresses only.
    pub async fn start_public_only(database_url: &str) -> TestServer {
        let setup = Setup {
            allow_private_webhooks: false,
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server whose longest single await is `max_await`.
    pub async fn start_max_await(database_url: &str, max_await: Duration) -> TestServer {
        let setup = Setup {
            max_await,
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server whose `/mcp/omp` times its questions out after `timeout`
    /// (`SAYSO_OMP_ASK_TIMEOUT_S`).
    pub async fn start_omp_timeout(database_url: &str, timeout: Duration) -> TestServer {
        let setup = Setup {
            omp_ask_timeout: Some(timeout),
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server whose public URL is `http://localhost:<port>` (passkeys need a host name).
    pub async fn start_on_localhost(database_url: &str) -> TestServer {
        let setup = Setup {
            localhost: true,
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server listening on every interface, as one a phone on the LAN reaches; its links
    /// name `public_host` (plain http on that port), else 127.0.0.1.
    pub async fn start_on_every_interface(
        database_url: &str,
        public_host: Option<&str>,
    ) -> TestServer {
        let setup = Setup {
            every_interface: Some(public_host.map(str::to_string)),
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// Another replica on the database of `first`, with its key.
    pub async fn start_replica(database_url: &str, first: &TestServer) -> TestServer {
        let setup = Setup {
            key: Some(first.key.clone()),
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A server whose outbox worker delivers: email through `smtp_url` when given, and Web
    /// Push, ntfy and webhooks (private addresses allowed), retrying after 50 ms.
    pub async fn start_notifying(database_url: &str, smtp_url: Option<&str>) -> TestServer {
        let setup = Setup {
            notify: Some(smtp_url.map(str::to_string)),
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A notifying server without email or a rate limit, whose people get at most
    /// `per_window` notifications on each channel in any `window`.
    pub async fn start_budgeted(
        database_url: &str,
        per_window: u32,
        window: Duration,
    ) -> TestServer {
        let setup = Setup {
            notify: Some(None),
            rate_limit: RateLimit::OFF,
            budget: (per_window, window),
            ..Setup::default()
        };
        Self::start_full(database_url, setup).await
    }

    /// A notifying server (no email, no rate limit, no budget) with the chats `chats` sets
    /// up: their couriers, listeners and inbound URLs.
    pub async fn start_chatting(
        database_url: &str,
        chats: sayso::chat::ChatSettings,
    ) -> TestServer {
        Self::start_full(database_url, Setup::chatting(chats)).await
    }

    /// `start_chatting` that sends mail through `smtp_url` too: every channel a person has.
    pub async fn start_on_every_channel(
        database_url: &str,
        smtp_url: &str,
        chats: sayso::chat::ChatSettings,
    ) -> TestServer {
        let setup = Setup {
            notify: Some(Some(smtp_url.to_string())),
            ..Setup::chatting(chats)
        };
        Self::start_full(database_url, setup).await
    }

    /// `start_chatting` on a database a server already ran on, whose API key is `key`.
    pub async fn restart_chatting(
        database_url: &str,
        key: &str,
        chats: sayso::chat::ChatSettings,
    ) -> TestServer {
        let setup = Setup {
            key: Some(key.to_string()),
            ..Setup::chatting(chats)
        };
        Self::start_full(database_url, setup).await
    }

    async fn start_full(database_url: &str, setup: Setup) -> TestServer {
        let Setup {
            limits,
            notify,
            rate_limit,
            key,
            max_await,
            allow_private_webhooks,
            trusted_proxies,
            omp_ask_timeout,
            localhost,
            every_interface,
            budget,
            chats,
        } = setup;
        init_tls();
        let address = match every_interface {
            Some(_) => "0.0.0.0:0",
            None => "127.0.0.1:0",
        };
        let listener = TcpListener::bind(address).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let base = match every_interface {
            Some(Some(host)) => format!("http://{host}:{port}"),
            _ if localhost => format!("http://localhost:{port}"),
            _ => default_public_url(([127, 0, 0, 1], port).into()),
        };
        let store = sayso::storage::connect(database_url).await.unwrap();
        let svc = Service::new(
            store,
            ServiceSettings {
                public_url: base.clone(),
                max_await,
                allow_private_webhooks,
                retention: None,
                expiry_interval: Duration::from_millis(200),
                email_enabled: matches!(notify, Some(Some(_))),
                urgent_per_hour: 10,
            },
        )
        .await
        .unwrap();
        let key = match key {
            Some(key) => key,
            None => {
                svc.first_run("default")
                    .await
                    .unwrap()
                    .expect("a fresh database has no inbox")
                    .api_key
            }
        };
        svc.start_background();
        if let Some(smtp_url) = notify {
            let settings = NotifySettings {
                smtp_url,
                mail_from: "sayso <sayso@example.com>".into(),
                allow_private_webhooks: true,
                retry_base: Duration::from_millis(50),
                notify_per_minute: budget.0,
                budget_window: budget.1,
                chats: chats.clone(),
                ..NotifySettings::default()
            };
            start_worker(&svc, &settings).unwrap();
        }
        let (tx, rx) = oneshot::channel::<()>();
        let settings = AppSettings {
            http: HttpSettings {
                rate_limit,
                trusted_proxies: sayso::web::client_addr::TrustedProxies::parse(&trusted_proxies)
                    .unwrap(),
                metrics_token: None,
            },
            chats,
            limits,
            mcp: sayso::mcp::McpSettings {
                omp_ask_timeout,
                ..Default::default()
            },
        };
        let task = tokio::spawn(serve(listener, svc.clone(), settings, async {
            let _ = rx.await;
        }));
        TestServer {
            base,
            key,
            svc,
            client: Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .unwrap(),
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// Stops accepting, answers parked awaits and waits for the server to finish.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Signals shutdown without waiting for it.
    pub fn begin_stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// The inbox `default`, made on the first run with the server's key.
    pub async fn default_inbox(&self) -> sayso::domain::inbox::Inbox {
        self.svc
            .store()
            .inbox_by_name("default")
            .await
            .unwrap()
            .expect("the first run makes the inbox default")
    }

    /// An ntfy stand-in the inbox `default` notifies, at its topic `phone`.
    pub async fn ntfy_phone(&self) -> crate::common::receiver::Receiver {
        let ntfy = crate::common::receiver::Receiver::ntfy().await;
        self.set_channels(&ChannelChanges {
            ntfy_url: Some(format!("{}/phone", ntfy.base)),
            ..ChannelChanges::default()
        })
        .await;
        ntfy
    }

    /// Mails the notifications of the inbox `default` to `address`.
    pub async fn mail_to(&self, address: &str) {
        self.set_channels(&ChannelChanges {
            email: Some(address.into()),
            ..ChannelChanges::default()
        })
        .await;
    }

    /// Sets the channels of the inbox `default` as `changes` says.
    pub async fn set_channels(&self, changes: &ChannelChanges) {
        self.svc
            .set_inbox_channels("default", changes)
            .await
            .unwrap();
    }

    /// Sets the person `name` of the inbox `default` as `settings` says.
    pub async fn set_person(&self, name: &str, settings: &PersonSettings) {
        self.svc
            .set_person("default", name, settings)
            .await
            .unwrap();
    }

    /// The person whose inbox `default` is.
    pub async fn owner(&self) -> sayso::domain::people::Person {
        let inbox = self.default_inbox().await;
        self.svc.store().person(inbox.id).await.unwrap().unwrap()
    }

    /// The feed link of the inbox `default`.
    pub async fn feed_url(&self) -> String {
        self.svc.feed_url(&self.default_inbox().await)
    }

    /// Adds a person named `name`, with no channels and no quiet hours, to the inbox
    /// `default`.
    pub async fn add_person(&self, name: &str) -> sayso::domain::people::Person {
        let person = sayso::domain::people::Person::named(
            uuid::Uuid::now_v7(),
            self.default_inbox().await.id,
            name,
            sayso::service::now(),
        );
        self.svc.store().add_person(&person).await.unwrap();
        person
    }

    /// A new inbox with its own key.
    pub async fn other_inbox_key(&self, name: &str) -> String {
        self.svc.create_inbox(name, None).await.unwrap();
        self.svc.create_api_key(name).await.unwrap()
    }

    /// `HOST:PORT`, for the tests that speak to the server over a bare TCP stream.
    pub fn addr(&self) -> String {
        self.base.trim_start_matches("http://").to_string()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with the default inbox's key.
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(&self.key)
    }

    /// The body of the page at `url`, fetched without a key.
    pub async fn page_text(&self, url: &str) -> String {
        let page = self.client.get(url).send().await.unwrap();
        page.text().await.unwrap()
    }

    /// Creates a decision and returns its handle; panics unless the answer is 201.
    pub async fn create(&self, body: Value) -> Value {
        let (status, json) = send(self.req(Method::POST, "/v1/decisions").json(&body)).await;
        assert_eq!(status, StatusCode::CREATED, "create failed: {json}");
        json
    }

    pub async fn get(&self, id: &str) -> Value {
        let (status, json) = send(self.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
        assert_eq!(status, StatusCode::OK, "get failed: {json}");
        json
    }

    /// The first pending decision whose question contains `question`, once there is one
    /// (the key lists it); panics after 20 s.
    pub async fn pending_asking(&self, question: &str) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let (_, page) = send(self.req(Method::GET, "/v1/decisions?status=pending")).await;
            if let Some(d) = page["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["question"].as_str().unwrap_or("").contains(question))
            {
                return d.clone();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no pending decision asking {question:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Answers as the person does, as JSON: a plain question through its `web_url`, a tool
    /// approval through its feed approval link (which no API response shows; derived here
    /// with the server's own tokens, as the feed page does).
    pub async fn answer(&self, web_url: &str, body: Value) -> (StatusCode, Value) {
        let url = self.person_url(web_url).await;
        send(self.client.post(url).json(&body)).await
    }

    /// `answer`, which must be taken (200): the answer's body.
    pub async fn answer_ok(&self, web_url: &str, body: Value) -> Value {
        let (status, json) = self.answer(web_url, body).await;
        assert_eq!(status, StatusCode::OK, "answer refused: {json}");
        json
    }

    /// Where the person answers the decision behind `web_url` from `channel`: a tool
    /// approval's approval link, any other decision's `web_url` itself.
    pub async fn person_url_via(&self, web_url: &str, channel: PersonChannel) -> String {
        let token = web_url
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .split('?')
            .next()
            .unwrap_or_default();
        let Some(id) = self.svc.tokens().open_answer_token(token) else {
            return web_url.to_string();
        };
        match self.svc.store().decision(None, id).await.unwrap() {
            // The inbox's own person (the one every inbox starts with).
            Some(d) => self.svc.person_url(&d, channel, d.inbox_id),
            None => web_url.to_string(),
        }
    }

    /// `person_url_via` the feed.
    pub async fn person_url(&self, web_url: &str) -> String {
        self.person_url_via(web_url, PersonChannel::Feed).await
    }

    pub async fn await_decision(&self, id: &str, timeout_s: u64) -> (StatusCode, Value) {
        send(self.req(
            Method::GET,
            &format!("/v1/decisions/{id}/await?timeout_s={timeout_s}"),
        ))
        .await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// Sends a request and returns its status and JSON body (`Null` when the body is not JSON).
pub async fn send(req: RequestBuilder) -> (StatusCode, Value) {
    let resp = req.send().await.expect("request sent");
    let status = resp.status();
    let text = resp.text().await.expect("body read");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The string at `key` of a JSON object.
pub fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Opens the feed link `link` as a browser does: the link binds the device and answers 303
/// to `/inbox`, which is then asked with the device cookie it set. Returns the last response
/// (the feed's, or the link's own when it sends the browser nowhere: a wrong link's 404) and
/// that cookie (`name=value`).
pub async fn open_feed(link: &str) -> (reqwest::Response, Option<String>) {
    let client = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let resp = client
        .get(link)
        .send()
        .await
        .expect("the feed link answered");
    if resp.status() != StatusCode::SEE_OTHER {
        return (resp, None);
    }
    let cookie = resp
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.contains("sayso_device=") && !c.contains("Max-Age=0"))
        .and_then(|c| c.split(';').next())
        .map(str::to_string);
    let location = resp.headers()[reqwest::header::LOCATION].to_str().unwrap();
    let feed = url::Url::parse(link).unwrap().join(location).unwrap();
    let mut req = client.get(feed);
    if let Some(cookie) = &cookie {
        req = req.header(reqwest::header::COOKIE, cookie);
    }
    (req.send().await.expect("the feed answered"), cookie)
}

/// The status and HTML of the feed a browser sees opening the feed link `link`.
pub async fn feed_page(link: &str) -> (StatusCode, String) {
    let (resp, _) = open_feed(link).await;
    (resp.status(), resp.text().await.unwrap())
}

/// The status of the feed's first page and the HTML of every page, following each page's
/// "Next" link (`rel="next"`) as the browser that opened `link` would.
pub async fn feed_pages(link: &str) -> (StatusCode, Vec<String>) {
    let (resp, cookie) = open_feed(link).await;
    let (status, mut url) = (resp.status(), resp.url().clone());
    let mut pages = vec![resp.text().await.unwrap()];
    let client = reqwest::Client::new();
    while let Some(next) = pages.last().and_then(|html| next_link(html)) {
        assert!(pages.len() < 1000, "the feed's pages never end");
        url = url.join(&next).unwrap();
        let mut req = client.get(url.clone());
        if let Some(cookie) = &cookie {
            req = req.header(reqwest::header::COOKIE, cookie);
        }
        let resp = req.send().await.expect("the feed answered");
        assert_eq!(resp.status(), StatusCode::OK, "{url}");
        pages.push(resp.text().await.unwrap());
    }
    (status, pages)
}

/// A feed page's "Next" link, its escaped `&` read back.
pub fn next_link(html: &str) -> Option<String> {
    let at = html.find(r#"rel="next""#)?;
    let before = &html[..at];
    let href = before.rfind("href=\"")? + 6;
    let end = before[href..].find('"')? + href;
    Some(
        before[href..end]
            .replace("&amp;", "&")
            .replace("&#38;", "&"),
    )
}
