//! The rig the real harnesses run in: the programs installed from npm at pinned versions
//! (`tests/harnesses/install.sh`), a scripted model endpoint on loopback (`model.mjs`), and a
//! sandbox per run with a `HOME` and a project of its own and nothing of the machine's
//! environment but `PATH`'s system directories.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::common::mcp_py::post_page;
use crate::common::server::TestServer;
use crate::run::answer_next;
pub use crate::run::{BIN, Dir};

/// How long one harness run may take.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Where `install.sh` puts the harnesses: `$SAYSO_HARNESS_DIR`, else
/// `~/.cache/sayso/harnesses`; each program is linked from its `bin/`.
pub fn harness_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SAYSO_HARNESS_DIR") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".cache/sayso/harnesses")
}

/// The installed program `name` (`claude`, `codex`, `gemini`, `copilot`, `pi`, `omp`, `bun`),
/// or `None` with a `SKIPPED` line; under `CI=true` a missing harness fails the test.
pub fn harness(name: &str) -> Option<PathBuf> {
    let path = harness_dir().join("bin").join(name);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{name} is not installed under {} (run tests/harnesses/install.sh)",
        harness_dir().display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// The scripted model endpoint, stopped on drop.
pub struct Model {
    child: Child,
    pub port: u16,
    script: PathBuf,
    log: PathBuf,
    _dir: Dir,
}

impl Model {
    /// Starts the endpoint with `turns` ({"tool": {name, input}} or {"text": …}, model.mjs).
    pub async fn start(turns: Value) -> Model {
        let dir = Dir::new();
        let script = dir.path().join("script.json");
        let log = dir.path().join("requests.jsonl");
        std::fs::write(&script, serde_json::json!({ "turns": turns }).to_string()).unwrap();
        std::fs::write(&log, "").unwrap();
        let mut child = Command::new("node")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harnesses/model.mjs"))
            .arg(&script)
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs tests/harnesses/model.mjs");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("the model endpoint starts within 20 s")
            .unwrap()
            .expect("the model endpoint prints its port");
        let port = first
            .strip_prefix("listening ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line from model.mjs: {first:?}"));
        Model {
            child,
            port,
            script,
            log,
            _dir: dir,
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Replaces the script for the requests to come.
    pub fn script(&self, turns: Value) {
        std::fs::write(
            &self.script,
            serde_json::json!({ "turns": turns }).to_string(),
        )
        .unwrap();
    }

    /// Every request so far, in order, as model.mjs logged it.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The requests of the conversation (those offering tools), leaving out side requests.
    pub fn turns(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["turn"].is_u64() && r["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .collect()
    }

    /// What the model was handed back from `tool`, in the last request that carries it.
    pub fn tool_result(&self, tool: &str) -> Option<Value> {
        last_result(&self.turns(), tool)
    }

    /// What the model was handed back from its last call of `tool`; a test fails without one.
    pub fn result(&self, tool: &str) -> Value {
        self.tool_result(tool)
            .unwrap_or_else(|| panic!("no {tool} result reached the model: {}", self.dump()))
    }

    /// The tool names offered in the first conversation request.
    pub fn tools_offered(&self) -> Vec<String> {
        self.turns()
            .first()
            .and_then(|r| r["tools"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    }

    /// Logged requests as text, for a failing assertion's message.
    pub fn dump(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// A run's own `HOME` and project directory, removed on drop.
pub struct Sandbox {
    root: Dir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let root = Dir::new();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        std::fs::create_dir_all(root.path().join("project")).unwrap();
        Sandbox { root }
    }

    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    pub fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// Writes `text` at `rel` under the sandbox root (`home/…` or `project/…`).
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        self.root.write(rel, text)
    }

    /// `program` in the project directory, with only this sandbox's `HOME`, a `PATH` of the
    /// harnesses, `sayso` and the system, and the variables given later. Nothing of the
    /// machine's environment (a model key, a sayso key) leaks in.
    pub fn command(&self, program: &Path) -> Command {
        let sayso_dir = Path::new(BIN).parent().unwrap();
        let path = format!(
            "{}:{}:/usr/local/bin:/usr/bin:/bin",
            sayso_dir.display(),
            harness_dir().join("bin").display()
        );
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", self.home())
            .env("PATH", path)
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env("CI", "true")
            .current_dir(self.project())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// `sayso ARGS --dir PROJECT` in the project, as the person runs it there, against `srv`.
    pub async fn sayso(&self, args: &[&str], srv: &TestServer) -> Ran {
        let mut cmd = self.command(Path::new(BIN));
        cmd.args(args)
            .arg("--dir")
            .arg(self.project())
            .env("SAYSO_URL", &srv.base)
            .env("SAYSO_KEY", &srv.key);
        run(cmd, LIMIT).await
    }

    /// `sayso hook install HARNESS` in the project, checked to succeed; what it said.
    pub async fn install(&self, harness: &str, srv: &TestServer) -> Ran {
        let out = self.sayso(&["hook", "install", harness], srv).await;
        assert_eq!(out.code, Some(0), "{}", out.both());
        out
    }
}

/// The model's turns: call `tool` with `input`, then stop.
pub fn call(tool: &str, input: Value) -> Value {
    json!([{"tool": {"name": tool, "input": input}}, {"text": "Done."}])
}

/// The base URL of a port nothing listens on.
pub fn closed_base() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

/// One way a hook gets no answer: the file its command would make, the sayso URL and key it
/// is given, and what the model then reads. Each runs with `SAYSO_HOOK_TIMEOUT_S=2`.
pub struct Fallback {
    pub file: &'static str,
    pub base: String,
    pub key: String,
    pub says: &'static str,
}

impl Fallback {
    /// Runs `cmd`, the harness given this fallback's URL and key, with the hook's wait at 2 s,
    /// and checks the command did not run.
    pub async fn blocks(&self, sb: &Sandbox, model: &Model, mut cmd: Command) -> Ran {
        cmd.env("SAYSO_HOOK_TIMEOUT_S", "2");
        let ran = run(cmd, LIMIT).await;
        assert!(
            !sb.project().join(self.file).exists(),
            "{}: the command ran: {}\n{}",
            self.file,
            ran.both(),
            model.dump()
        );
        ran
    }
}

/// Nobody answers in time, the server is down, the key is refused.
pub fn fallbacks(srv: &TestServer) -> [Fallback; 3] {
    let case = |file, base: &str, key: &str, says| Fallback {
        file,
        base: base.to_string(),
        key: key.to_string(),
        says,
    };
    [
        case("late.txt", &srv.base, &srv.key, "no answer in 2 s"),
        case(
            "down.txt",
            &closed_base(),
            &srv.key,
            "cannot reach the sayso server",
        ),
        case("badkey.txt", &srv.base, "sk_not_a_key", "API key"),
    ]
}

/// Starts `cmd`, answers the question it puts to the person with `answer` on the page and
/// waits for the harness to end; returns the run and the decision as it was asked.
pub async fn answered(srv: &TestServer, mut cmd: Command, answer: Value) -> (Ran, Value) {
    let child = cmd.spawn().expect("the harness starts");
    let d = answer_next(srv, answer).await;
    (ended(child).await, d)
}

/// A run whose question the person answered.
pub struct Answered {
    pub ran: Ran,
    /// The decision as it was asked.
    pub asked: Value,
    /// What the model was handed back from the gated tool after the run.
    pub read: Value,
}

/// The person allows a command (`touch allowed.txt`), then denies the next (`touch
/// denied.txt`) with `remark`: checks the first ran and the second did not. `touch` scripts
/// the model's call of `tool`, `harness` starts a run.
pub async fn allow_then_deny(
    (srv, sb, model): (&TestServer, &Sandbox, &Model),
    tool: &str,
    touch: impl Fn(&str) -> Value,
    harness: impl Fn() -> Command,
    remark: &str,
) -> [Answered; 2] {
    let mut runs = Vec::new();
    let deny = json!({"value": "Deny", "remark": remark});
    for (file, answer, runs_it) in [
        ("allowed.txt", json!({"value": "Allow"}), true),
        ("denied.txt", deny, false),
    ] {
        model.script(touch(file));
        let (ran, asked) = answered(srv, harness(), answer).await;
        assert_eq!(
            sb.project().join(file).exists(),
            runs_it,
            "{file}: {}\n{}",
            ran.both(),
            model.dump()
        );
        let read = model.result(tool);
        runs.push(Answered { ran, asked, read });
    }
    runs.try_into().ok().unwrap()
}

/// Answers the person's page at `web_url` with `fields`, checks the page took the answer,
/// and waits for the agent `child`, which asked, to end well.
pub async fn ended_once_answered(
    srv: &TestServer,
    web_url: &str,
    fields: &[(&str, &str)],
    child: Child,
) -> Ran {
    let status = post_page(srv, web_url, fields).await;
    assert!(status < 400, "the page took the answer: {status}");
    let ran = ended(child).await;
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    ran
}

/// What the model was handed back from `tool`, in the last of `requests` that carries it.
pub fn last_result(requests: &[Value], tool: &str) -> Option<Value> {
    requests.iter().rev().find_map(|r| {
        r["tool_results"]
            .as_array()?
            .iter()
            .rev()
            .find(|t| t["name"] == tool)
            .cloned()
    })
}

/// How a harness run ended.
#[derive(Debug)]
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Both streams, for a failing assertion's message.
    pub fn both(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to its end, killed after `limit`.
pub async fn run(mut cmd: Command, limit: Duration) -> Ran {
    ended_within(cmd.spawn().expect("the harness starts"), limit).await
}

/// Waits for a started harness to end, killed after [`LIMIT`].
pub async fn ended(child: Child) -> Ran {
    ended_within(child, LIMIT).await
}

pub async fn ended_within(child: Child, limit: Duration) -> Ran {
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the harness did not finish within {limit:?}"))
        .unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
