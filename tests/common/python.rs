//! Python tools the tests run — reference implementations, a fuzzer, an SDK, the client's
//! suites — each in its own virtual environment under the target directory, made once per
//! test binary; and the one runner of the client's pytest suites.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

/// A virtual environment and what must import in it, made on first use: each test binary
/// keeps the ones it needs as `static`s.
pub struct Venv {
    /// Its directory's name under `CARGO_TARGET_TMPDIR`.
    dir: &'static str,
    /// The modules to import, e.g. `"schemathesis, openapi_spec_validator"`.
    modules: &'static str,
    /// The PyPI packages that provide them; `"-r", "clients/python/…/x.txt"` names a
    /// requirements file, by its path in the repository.
    packages: &'static [&'static str],
    /// What they are, for the messages.
    purpose: &'static str,
    /// Its Python once made, or `None` when it could not be.
    made: OnceLock<Option<PathBuf>>,
}

impl Venv {
    /// The environment in `dir` where `modules` import once `packages` are installed;
    /// `purpose` says what they are.
    pub const fn new(
        dir: &'static str,
        modules: &'static str,
        packages: &'static [&'static str],
        purpose: &'static str,
    ) -> Self {
        Venv {
            dir,
            modules,
            packages,
            purpose,
            made: OnceLock::new(),
        }
    }

    /// The environment's Python, made on first use. `None` after a loud SKIPPED when it
    /// cannot be made, except in CI (`CI` set), where that fails the test.
    pub fn python(&'static self) -> Option<&'static PathBuf> {
        self.made
            .get_or_init(|| match install(self) {
                Ok(python) => {
                    // The first test to ask makes it; the others find it made.
                    println!("{}: ready at {}", self.purpose, python.display());
                    Some(python)
                }
                Err(why) => {
                    if std::env::var_os("CI").is_some() {
                        panic!("{} is required in CI: {why}", self.purpose);
                    }
                    eprintln!("SKIPPED: {} unavailable ({why})", self.purpose);
                    None
                }
            })
            .as_ref()
    }
}

fn install(venv: &Venv) -> Result<PathBuf, String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(venv.dir);
    let python = dir.join("bin").join("python");
    let imports = |python: &PathBuf| {
        Command::new(python)
            .args(["-c", &format!("import {}", venv.modules)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if imports(&python) {
        return Ok(python);
    }
    let started = std::time::Instant::now();
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&dir),
        "python3 -m venv",
    )?;
    run(
        Command::new(dir.join("bin").join("pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--timeout",
                "60",
            ])
            .args(venv.packages.iter().map(|p| in_repo(p))),
        &format!("pip install {}", venv.packages.join(" ")),
    )?;
    // CI's stage for the clients shows how long the packages took to install.
    println!(
        "{}: installed in {:.1} s",
        venv.purpose,
        started.elapsed().as_secs_f64()
    );
    if imports(&python) {
        Ok(python)
    } else {
        Err(format!("{} does not import after installing", venv.modules))
    }
}

/// Runs the pytest folder `folder` of clients/python against this build's `sayso` and fails
/// with its output unless every test in it ran and passed. `env` is set and `unset` removed
/// for it, besides the server's own variables, which the suite sets itself.
pub fn pytest(python: &Path, folder: &str, env: &[(&str, &str)], unset: &[&str]) {
    let root = env!("CARGO_MANIFEST_DIR");
    let started = Instant::now();
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("{root}/clients/python/{folder}"))
        .current_dir(root)
        .env("SAYSO_BIN", env!("CARGO_BIN_EXE_sayso"))
        // The source as it is now, before the copy installed when the venv was made.
        .env("PYTHONPATH", format!("{root}/clients/python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(env.iter().copied());
    for name in ["SAYSO_URL", "SAYSO_KEY"].iter().chain(unset) {
        cmd.env_remove(name);
    }
    let out = cmd.output().expect("pytest runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the {folder} suite failed:\n{text}");
    assert!(
        !text.contains(" skipped"),
        "a test of {folder} was skipped:\n{text}"
    );
    println!("{folder}: {:.1} s\n{text}", started.elapsed().as_secs_f64());
}

/// Runs `script` (its path in the repository) with `python` and `args`, `input` on its
/// stdin, to its end.
pub fn run_script(python: &Path, script: &str, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(python)
        .arg(format!("{}/{script}", env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{script} does not start: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// A requirements file named by its path in the repository, as pip finds it from anywhere;
/// anything else as it is.
fn in_repo(package: &str) -> String {
    if package.ends_with(".txt") && !package.starts_with('/') {
        format!("{}/{package}", env!("CARGO_MANIFEST_DIR"))
    } else {
        package.to_string()
    }
}
