//! sayso as deployed: the real binary, with the settings deploy/sayso.env names, behind the
//! real Caddy or nginx running the files of deploy/ on loopback ports.
//!
//! Addresses: the proxies listen on 127.0.0.1 and reach sayso from 127.0.0.1, the one address
//! sayso trusts (`SAYSO_TRUSTED_PROXIES=127.0.0.1`, as in deploy/sayso.env). The tests' clients
//! connect from other loopback addresses (127.0.0.2, …), so sayso can tell a client from the
//! proxy, as it can on a real host. The public name is `sayso.example.com`, resolved to
//! loopback by each client, so certificates, `Host` and links are those of a real site.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use uuid::Uuid;

use crate::common::first_run;
use crate::common::server::init_tls;

/// The name phones reach, in every test.
pub const DOMAIN: &str = "sayso.example.com";
/// The address the proxies reach sayso from, and the only one sayso trusts.
pub const PROXY_ADDR: &str = "127.0.0.1";

/// A folder removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(what: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("sayso-{what}-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temporary folder");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub use crate::common::port::free_port;

/// The path of the repository's `deploy/` file `name`.
pub fn deploy_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(name)
}

/// The first `name` on `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `Some(path)` of the program, or `None` after a loud `SKIPPED` outside CI; in CI (`CI`
/// set) a missing program fails the test.
pub fn required(program: &str, install: &str) -> Option<PathBuf> {
    if let Some(path) = on_path(program) {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{program} not found (required in CI): {install}");
    }
    eprintln!("SKIPPED: {program} not found; {install} to run the deployment tests");
    None
}

/// The real `sayso serve`, with its log lines kept.
pub struct Sayso {
    _child: Child,
    pub addr: SocketAddr,
    /// The first run's API key and feed link.
    pub key: String,
    pub feed: String,
    logs: Arc<Mutex<Vec<String>>>,
    _dir: TempDir,
}

impl Sayso {
    /// Starts sayso on a fresh SQLite database, on a loopback port, with the settings of
    /// deploy/sayso.env for `public_url` and `env` on top.
    pub async fn start(public_url: &str, env: &[(&str, &str)]) -> Sayso {
        let dir = TempDir::new("deploy-db");
        let db = format!("sqlite://{}", dir.path().join("sayso.db").display());
        let mut child = Command::new(env!("CARGO_BIN_EXE_sayso"))
            .arg("serve")
            .env("SAYSO_DATABASE_URL", &db)
            .env("SAYSO_LISTEN", "127.0.0.1:0")
            .env("SAYSO_PUBLIC_URL", public_url)
            .env("SAYSO_TRUSTED_PROXIES", PROXY_ADDR)
            .env("SAYSO_LOG_FORMAT", "json")
            // The request lines (with the client address) are tower_http's, at debug.
            .env(
                "SAYSO_LOG",
                "info,tower_http=debug,sayso::notify=warn,sayso::chat=warn",
            )
            .env_remove("SAYSO_SMTP_URL")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("sayso starts");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = stderr.next_line().await.unwrap() {
                let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                if v["fields"]["message"] == "sayso is listening" {
                    return v["fields"]["address"].as_str().unwrap().parse().unwrap();
                }
                eprintln!("sayso: {line}");
            }
            panic!("sayso exited before listening");
        })
        .await
        .expect("sayso listens within 60 s");
        let kept = logs.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                kept.lock().unwrap().push(line);
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        // The first run writes its secrets next to the SQLite database before it listens.
        let first = std::fs::read_to_string(dir.path().join(first_run::FILE_NAME))
            .expect("the first run writes its file next to the database");
        let first_run::Secrets { key, feed, .. } = first_run::Secrets::parse(&first);
        Sayso {
            _child: child,
            addr,
            key,
            feed,
            logs,
            _dir: dir,
        }
    }

    /// The log lines so far.
    pub fn logs(&self) -> Vec<String> {
        self.logs.lock().unwrap().clone()
    }
}

/// Which proxy is in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proxy {
    Caddy,
    Nginx,
}

/// A proxy in front of a sayso, with sayso and an HTTPS client for each source address.
pub struct Stack {
    pub sayso: Sayso,
    /// `https://sayso.example.com:PORT`, sayso's public URL.
    pub public: String,
    /// The certificate the clients trust: Caddy's local root, or nginx's self-signed one.
    ca: Vec<u8>,
    port: u16,
    _proxy: Child,
    _dir: TempDir,
}

impl Stack {
    /// sayso behind `proxy`, with `env` on top of sayso's settings; `None` when the proxy is
    /// not installed (outside CI).
    pub async fn start(proxy: Proxy, env: &[(&str, &str)]) -> Option<Stack> {
        init_tls();
        let dir = TempDir::new(match proxy {
            Proxy::Caddy => "caddy",
            Proxy::Nginx => "nginx",
        });
        let port = free_port();
        let public = format!("https://{DOMAIN}:{port}");
        let (child, ca, sayso) = match proxy {
            Proxy::Caddy => {
                let caddy = required("caddy", "apt-get install caddy")?;
                let sayso = Sayso::start(&public, env).await;
                let child = super::proxies::start_caddy(&caddy, dir.path(), port, sayso.addr);
                let ca = super::proxies::caddy_root(dir.path()).await;
                (child, ca, sayso)
            }
            Proxy::Nginx => {
                let nginx = required("nginx", "apt-get install nginx")?;
                let openssl = required("openssl", "apt-get install openssl")?;
                let sayso = Sayso::start(&public, env).await;
                let ca = super::proxies::self_signed(&openssl, dir.path()).await;
                let child = super::proxies::start_nginx(&nginx, dir.path(), port, sayso.addr);
                (child, ca, sayso)
            }
        };
        let stack = Stack {
            sayso,
            public,
            ca,
            port,
            _proxy: child,
            _dir: dir,
        };
        stack.wait_until_served().await;
        Some(stack)
    }

    /// An HTTPS client of the public URL that connects from `from` (a loopback address).
    pub fn client_from(&self, from: Ipv4Addr) -> reqwest::Client {
        let cert = reqwest::Certificate::from_pem(&self.ca).expect("the proxy's certificate");
        reqwest::Client::builder()
            .tls_certs_only([cert])
            .resolve(DOMAIN, SocketAddr::from(([127, 0, 0, 1], self.port)))
            .local_address(IpAddr::V4(from))
            .timeout(Duration::from_secs(180))
            .build()
            .unwrap()
    }

    /// A client from 127.0.0.2.
    pub fn client(&self) -> reqwest::Client {
        self.client_from(Ipv4Addr::new(127, 0, 0, 2))
    }

    /// A client from 127.0.0.2 that follows no redirect, to read a `303` and its cookie.
    pub fn client_not_following(&self) -> reqwest::Client {
        let cert = reqwest::Certificate::from_pem(&self.ca).expect("the proxy's certificate");
        reqwest::Client::builder()
            .tls_certs_only([cert])
            .resolve(DOMAIN, SocketAddr::from(([127, 0, 0, 1], self.port)))
            .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(180))
            .build()
            .unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.public)
    }

    /// Until the proxy answers for sayso (from an address of its own, so the rate limit of
    /// the tests' addresses is untouched).
    async fn wait_until_served(&self) {
        let client = self.client_from(Ipv4Addr::new(127, 0, 0, 100));
        let started = Instant::now();
        loop {
            match client.get(self.url("/readyz")).send().await {
                Ok(r) if r.status().is_success() => return,
                Ok(r) if started.elapsed() > Duration::from_secs(30) => {
                    panic!("the proxy answers {} for /readyz", r.status())
                }
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    panic!("the proxy does not answer: {e:?}")
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }
}
