//! A real Chromium, driven through chromedriver (WebDriver), at phone width.
//!
//! Each [`Browser`] runs its own chromedriver on a free port, in its own process group, with
//! a fresh profile directory; closing or dropping it ends the session, kills the group and
//! removes the directory. Chromium is heavy on a small machine, so the browsers of one test
//! binary take turns: a second `Browser::start` waits until the first is gone.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::http::Method;
use fantoccini::elements::Element;
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tokio::sync::{Mutex, MutexGuard};
use uuid::Uuid;

use super::port::free_port;
use super::server::init_tls;

/// The Chromium binary Debian's `chromium` package installs.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Phone width.
pub const WIDTH: u32 = 360;
pub const HEIGHT: u32 = 800;

/// How long a wait for the page (an element, a navigation) may take before the test fails.
const PAGE_WAIT: Duration = Duration::from_secs(20);

/// One browser at a time per test binary (each test has a runtime of its own; tokio's
/// mutex works across them).
static TURN: Mutex<()> = Mutex::const_new(());

/// A WebDriver session in a headless Chromium of its own.
pub struct Browser {
    pub client: Client,
    driver: Driver,
    _turn: MutexGuard<'static, ()>,
}

/// The chromedriver process (and the Chromium it starts) and the profile directory.
struct Driver {
    child: Child,
    profile: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // chromedriver was started as the leader of its own process group; Chromium and its
        // helpers inherit the group, so one signal ends them all.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Chromium's helpers may still be writing for a moment after the kill.
        for _ in 0..20 {
            if std::fs::remove_dir_all(&self.profile).is_ok() || !self.profile.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The first `name` on `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

impl Browser {
    /// Starts chromedriver and opens a Chromium session at 360×800. `None` (after a loud
    /// `SKIPPED` on stderr) when chromedriver or Chromium is not installed, except in CI
    /// (`CI` set), where that fails the test.
    pub async fn start() -> Option<Browser> {
        Browser::start_accepting(None).await
    }

    /// The same, its `Accept-Language` set to `languages` ("de-AT,de;q=0.9") when given,
    /// as a browser set to those languages sends it.
    pub async fn start_accepting(languages: Option<&str>) -> Option<Browser> {
        let turn = TURN.lock().await;
        let Some(chromedriver) = on_path("chromedriver").filter(|_| Path::new(CHROMIUM).is_file())
        else {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "chromedriver or {CHROMIUM} not found (required in CI): \
                     apt-get install chromium chromium-driver"
                );
            }
            eprintln!(
                "SKIPPED: chromedriver not found (or no {CHROMIUM}); \
                 apt-get install chromium chromium-driver to run the browser tests"
            );
            return None;
        };
        init_tls();

        let profile =
            std::env::temp_dir().join(format!("sayso-chromium-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&profile).expect("profile directory");
        let port = free_port();
        let child = std::os::unix::process::CommandExt::process_group(
            Command::new(&chromedriver)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
            0,
        )
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", chromedriver.display()));
        let mut driver = Driver { child, profile };
        let webdriver = format!("http://127.0.0.1:{port}");
        wait_until_ready(&mut driver, &webdriver).await;

        let mut caps = Capabilities::new();
        caps.insert(
            "goog:chromeOptions".to_owned(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--no-first-run",
                    "--disable-quic",
                    "--disable-component-update",
                    "--disable-sync",
                    format!("--window-size={WIDTH},{HEIGHT}"),
                    format!("--user-data-dir={}", driver.profile.display()),
                ],
                "prefs": languages.map(|l| json!({"intl.accept_languages": l})).unwrap_or(json!({})),
            }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&webdriver)
            .await
            .unwrap_or_else(|e| panic!("opening a Chromium session through chromedriver: {e}"));
        client
            .set_window_size(WIDTH, HEIGHT)
            .await
            .expect("window resized");
        // Headless Chromium still draws a window frame of its own: grow the window until
        // the page itself (the viewport, what the screenshots show) is 360×800.
        let inner = client
            .execute("return [window.innerWidth, window.innerHeight]", vec![])
            .await
            .expect("viewport size");
        let frame = |i: usize, want: u32| {
            let got = inner[i].as_u64().unwrap_or(u64::from(want)) as u32;
            want + want.saturating_sub(got)
        };
        client
            .set_window_size(frame(0, WIDTH), frame(1, HEIGHT))
            .await
            .expect("window resized");
        Some(Browser {
            client,
            driver,
            _turn: turn,
        })
    }

    /// Makes the viewport (what the page sees, and the screenshots show) `width`×`height`.
    #[allow(dead_code)]
    pub async fn resize(&self, width: u32, height: u32) {
        for _ in 0..3 {
            let inner = self
                .client
                .execute("return [window.innerWidth, window.innerHeight]", vec![])
                .await
                .expect("viewport size");
            let (w, h) = (
                inner[0].as_u64().unwrap_or(0) as u32,
                inner[1].as_u64().unwrap_or(0) as u32,
            );
            if (w, h) == (width, height) {
                return;
            }
            let outer = self.client.get_window_rect().await.expect("window size");
            let grow = |outer: u64, inner: u32, want: u32| {
                (outer as i64 + i64::from(want) - i64::from(inner)).max(1) as u32
            };
            self.client
                .set_window_size(grow(outer.2, w, width), grow(outer.3, h, height))
                .await
                .expect("window resized");
        }
    }

    /// Ends the session (Chromium exits), then stops chromedriver and removes the profile.
    pub async fn close(self) {
        let Browser {
            client,
            driver,
            _turn,
        } = self;
        let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
        drop(driver);
    }

    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("loading {url}: {e}"));
    }

    /// The element matching `css`; fails the test when there is none.
    pub async fn find(&self, css: &str) -> Element {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element {css}: {e}"))
    }

    /// Whether an element matches `css`, now.
    pub async fn has(&self, css: &str) -> bool {
        self.count(css).await > 0
    }

    /// How many elements match `css`, now.
    pub async fn count(&self, css: &str) -> usize {
        self.client
            .find_all(Locator::Css(css))
            .await
            .expect("find_all")
            .len()
    }

    /// The attribute `name` of the element matching `css` (`None` when it has none); fails
    /// the test when no element matches.
    pub async fn attr_of(&self, css: &str, name: &str) -> Option<String> {
        self.find(css)
            .await
            .attr(name)
            .await
            .unwrap_or_else(|e| panic!("{css}'s {name}: {e}"))
    }

    /// The visible text of the element matching `css`; fails the test when there is none.
    pub async fn text_of(&self, css: &str) -> String {
        self.find(css)
            .await
            .text()
            .await
            .expect("the element's text")
    }

    /// Waits (up to 20 s) for an element matching `css`.
    pub async fn wait_for(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(PAGE_WAIT)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("waiting for {css}: {e}"))
    }

    /// Taps the element matching `css`.
    pub async fn click(&self, css: &str) {
        self.find(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("clicking {css}: {e}"));
    }

    /// Taps the element matching `css` and waits until the page it leads to has loaded.
    pub async fn click_and_wait(&self, css: &str) {
        self.tap_and_wait(Locator::Css(css)).await;
    }

    /// Taps the element `at` finds and waits until the page it leads to has loaded.
    pub async fn tap_and_wait(&self, at: Locator<'_>) {
        let target = self
            .client
            .find(at)
            .await
            .unwrap_or_else(|e| panic!("no element {at:?}: {e}"));
        self.mark_page().await;
        target
            .click()
            .await
            .unwrap_or_else(|e| panic!("clicking {at:?}: {e}"));
        self.wait_for_new_page().await;
    }

    /// Marks the page open now, for [`Browser::wait_for_new_page`].
    pub async fn mark_page(&self) {
        self.js("window.__sayso_old_page = true; return null", vec![])
            .await;
    }

    /// Waits until the page marked by `mark_page` has been replaced and has loaded.
    pub async fn wait_for_new_page(&self) {
        let start = Instant::now();
        loop {
            // During the navigation a script may fail to run; that only means "not yet".
            let done = self
                .client
                .execute(
                    "return window.__sayso_old_page !== true && document.readyState === 'complete'",
                    vec![],
                )
                .await
                .map(|v| v == Value::Bool(true))
                .unwrap_or(false);
            if done {
                return;
            }
            assert!(
                start.elapsed() < PAGE_WAIT,
                "the page did not change after the tap"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Types `text` into the element matching `css` (after clearing it).
    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self.find(css).await;
        field
            .clear()
            .await
            .unwrap_or_else(|e| panic!("clearing {css}: {e}"));
        field
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("typing into {css}: {e}"));
    }

    /// Runs a script in the page (`return …` gives its value).
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The page's visible text.
    pub async fn text(&self) -> String {
        self.js("return document.body.innerText", vec![])
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The path of the current page.
    pub async fn path(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("current url")
            .path()
            .to_owned()
    }

    /// Runs `method` on `/session/{id}/{path}`; the value it answers.
    pub async fn command(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let path = path.to_owned();
        self.client
            .issue_cmd(SessionCommand {
                method,
                path: path.clone(),
                body,
            })
            .await
            .unwrap_or_else(|e| panic!("WebDriver {path}: {e}"))
    }

    /// Runs a Chrome DevTools Protocol command through chromedriver (its
    /// `goog/cdp/execute`), for what WebDriver has no command for: the device's scale, the
    /// colour scheme.
    pub async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.command(
            Method::POST,
            "goog/cdp/execute",
            Some(json!({"cmd": cmd, "params": params})),
        )
        .await
    }

    /// The accessible name Chromium computes for `element` (WebDriver's Get Computed Label):
    /// what a screen reader announces it as.
    pub async fn computed_label(&self, element: &Element) -> String {
        let path = format!("element/{}/computedlabel", element.element_id());
        let label = self.command(Method::GET, &path, None).await;
        label.as_str().unwrap_or_default().to_owned()
    }

    /// Saves what the browser shows (360×800) as `target/screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("screenshot taken");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        path
    }
}

/// `target/screenshots/` (under `CARGO_TARGET_DIR` when set), created on first use.
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// A command of the session that fantoccini does not name: `method` on
/// `/session/{id}/{path}`, with `body` (`None` sends none).
#[derive(Debug)]
pub struct SessionCommand {
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
}

impl WebDriverCompatibleCommand for SessionCommand {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/{}",
            session_id.unwrap_or_default(),
            self.path
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (Method, Option<String>) {
        (
            self.method.clone(),
            self.body.as_ref().map(Value::to_string),
        )
    }
}

/// Polls chromedriver's `/status` until it says it is ready.
async fn wait_until_ready(driver: &mut Driver, webdriver: &str) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("http client");
    let start = Instant::now();
    loop {
        if let Ok(resp) = http.get(format!("{webdriver}/status")).send().await
            && let Ok(status) = resp.json::<Value>().await
            && status["value"]["ready"] == Value::Bool(true)
        {
            return;
        }
        if let Ok(Some(exit)) = driver.child.try_wait() {
            panic!("chromedriver exited before answering: {exit}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "chromedriver did not answer on {webdriver} within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
