//! The first run's secrets as `sayso serve` keeps them: in `first-run.txt` in its state
//! directory, never on a stdout that is not a terminal. Each process a test starts gets a
//! state directory of its own (`SAYSO_STATE_DIR`), so tests running at once never meet and
//! nothing is written into the working directory.

use std::path::{Path, PathBuf};

/// The file's name, as `sayso serve` writes it.
pub const FILE_NAME: &str = "first-run.txt";

/// A fresh, empty state directory for one `sayso serve`, removed (with the file) on drop.
pub struct StateDir(PathBuf);

impl StateDir {
    pub fn new() -> StateDir {
        let path =
            std::env::temp_dir().join(format!("sayso-state-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&path).expect("a state directory");
        StateDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `SAYSO_STATE_DIR` and this directory, for `Command::env`.
    pub fn env(&self) -> (&'static str, &Path) {
        ("SAYSO_STATE_DIR", &self.0)
    }

    /// The first run's file here.
    pub fn file(&self) -> PathBuf {
        self.0.join(FILE_NAME)
    }

    /// What the first run wrote here; `None` when this process made no inbox (the file is
    /// written before the server listens, so after that, absent means absent).
    pub fn secrets(&self) -> Option<Secrets> {
        let text = std::fs::read_to_string(self.file()).ok()?;
        Some(Secrets::parse(&text))
    }
}

impl Default for StateDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `default` inbox's secrets, as the first run's file (or its terminal banner) holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct Secrets {
    pub key: String,
    pub feed: String,
    pub webhook_secret: String,
}

impl Secrets {
    /// Reads the banner's three lines; panics, showing the text, when one is missing.
    pub fn parse(text: &str) -> Secrets {
        let last_word = |label: &str| {
            text.lines()
                .find(|l| l.contains(label))
                .and_then(|l| l.split_whitespace().last())
                .unwrap_or_else(|| panic!("no {label:?} line in the first run's text: {text}"))
                .to_string()
        };
        Secrets {
            key: last_word("API key"),
            feed: last_word("Feed link"),
            webhook_secret: last_word("Webhook signing secret"),
        }
    }
}
