//! The doctor tests' own folder tree: a project and a home under the temporary directory,
//! removed on drop.

use std::path::PathBuf;

use super::Setup;
use crate::hook::call::Harness;

pub(super) struct Scratch(pub(super) PathBuf);

impl Scratch {
    /// A new tree named for `label`, with the folders `dirs` (relative to it) made.
    pub(super) fn new(label: &str, dirs: &[&str]) -> Scratch {
        let root =
            std::env::temp_dir().join(format!("sayso-doctor-{label}-{}", uuid::Uuid::new_v4()));
        for dir in dirs {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        Scratch(root)
    }

    /// What `install` into the project at `project` leaves for `harness`: its settings file
    /// at `settings_file` (both relative to the tree), not yet read; the home is `home`.
    pub(super) fn setup(&self, harness: Harness, project: &str, settings_file: &str) -> Setup {
        Setup {
            harness,
            project: self.0.join(project),
            home: Some(self.0.join("home")),
            user: false,
            settings_file: self.0.join(settings_file),
            settings: None,
            command: format!("sayso hook {}", harness.as_str()),
            wait_s: 900,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
