//! The files `sayso hook install` changes, said before it writes any: the harness's settings
//! file, for Codex and gemini-cli a file of the user's own that every project shares
//! (Codex's `config.toml`, gemini-cli's `trustedFolders.json`), and sayso's own pinned
//! receipt keys (pins.rs). A change to a user-wide file reaches past the project, so install
//! names it as such; docs/HARNESSES.md says how to undo each.

use std::fmt;
use std::path::PathBuf;

use anyhow::Context;

use super::call::Harness;

/// One file install changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Touched {
    pub file: PathBuf,
    /// Read by the harness in every project of this user, not only this one.
    pub user_wide: bool,
    /// What install puts there.
    pub what: String,
}

impl fmt::Display for Touched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = if self.user_wide {
            "user-wide, read in every project"
        } else {
            "this project only"
        };
        write!(f, "  {} ({scope}): {}", self.file.display(), self.what)
    }
}

/// What install is about to do, for the harness and the folder it writes under.
pub struct Install<'a> {
    pub harness: Harness,
    /// The harness's settings file (or pi's extension).
    pub settings_file: &'a std::path::Path,
    /// `--user`: the settings file is the user's own.
    pub user: bool,
    /// The project, when not `--user`.
    pub project: Option<&'a std::path::Path>,
}

/// Every file `install` may change, in the order it writes them.
pub fn files(install: &Install) -> anyhow::Result<Vec<Touched>> {
    let name = crate::render::approval::agent_name(install.harness.as_str());
    let settings_what = match install.harness {
        Harness::Pi => "sayso's extension, which pi loads by itself".to_string(),
        _ => format!(
            "one entry running `sayso hook {}`",
            install.harness.as_str()
        ),
    };
    let mut out = vec![Touched {
        file: install.settings_file.to_path_buf(),
        user_wide: install.user,
        what: format!(
            "{name}'s {}: {settings_what}",
            settings_kind(install.harness)
        ),
    }];
    match install.harness {
        Harness::Codex => {
            let home = home()?;
            let project = match install.project {
                Some(p) => format!("marks {} a trusted project and ", p.display()),
                None => String::new(),
            };
            out.push(Touched {
                file: super::codex::config_file(&home),
                user_wide: true,
                what: format!(
                    "Codex's own config.toml: {project}trusts the hook entry (Codex runs no untrusted hook)"
                ),
            });
        }
        Harness::Gemini => {
            if let Some(p) = install.project {
                out.push(Touched {
                    file: gemini_trusted_folders()?,
                    user_wide: true,
                    what: format!(
                        "gemini-cli's trusted folders: adds {} (gemini-cli reads a project's hooks only in a trusted folder)",
                        p.display()
                    ),
                });
            }
        }
        _ => {}
    }
    if let Some(pins) = super::pins::file() {
        out.push(Touched {
            file: pins,
            user_wide: true,
            what: "sayso's pinned receipt keys: the server's public key, which the hook holds \
                   every Allow's receipt to"
                .to_string(),
        });
    }
    Ok(out)
}

/// The lines install prints first: the files, user-wide ones named as such.
pub fn announce(files: &[Touched], dry_run: bool) -> String {
    let mut text = format!(
        "{} (only what is missing is added; what they hold stays):\n",
        if dry_run {
            "sayso hook install would change"
        } else {
            "sayso hook install changes"
        }
    );
    for t in files {
        text.push_str(&t.to_string());
        text.push('\n');
    }
    if files.iter().any(|t| t.user_wide) {
        text.push_str("  (docs/HARNESSES.md, \"What install changes\", says how to undo each)\n");
    }
    text
}

fn settings_kind(harness: Harness) -> &'static str {
    match harness {
        Harness::Pi => "extensions folder",
        _ => "hook settings",
    }
}

fn home() -> anyhow::Result<PathBuf> {
    Ok(PathBuf::from(
        std::env::var_os("HOME").context("HOME is not set")?,
    ))
}

/// gemini-cli's `trustedFolders.json`: `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else under
/// `~/.gemini`.
pub fn gemini_trusted_folders() -> anyhow::Result<PathBuf> {
    match std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH").filter(|v| !v.is_empty()) {
        Some(p) => Ok(PathBuf::from(p)),
        None => Ok(home()?.join(".gemini").join("trustedFolders.json")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_user_wide_file_is_named_as_such() {
        let t = Touched {
            file: PathBuf::from("/home/me/.codex/config.toml"),
            user_wide: true,
            what: "x".into(),
        };
        let text = announce(&[t], false);
        assert!(
            text.contains("/home/me/.codex/config.toml (user-wide, read in every project): x"),
            "{text}"
        );
        assert!(text.contains("how to undo"), "{text}");
        let files = files(&Install {
            harness: Harness::Claude,
            settings_file: Path::new("/p/.claude/settings.json"),
            user: false,
            project: Some(Path::new("/p")),
        })
        .unwrap();
        assert!(!files[0].user_wide);
        assert!(!announce(&files[..1], true).contains("undo"));
        // The receipt keys are sayso's own, read in every project.
        match crate::hook::pins::file() {
            Some(pins) => assert_eq!(
                files[1..],
                [Touched {
                    file: pins,
                    user_wide: true,
                    what: files[1].what.clone(),
                }]
            ),
            None => assert_eq!(files.len(), 1),
        }
    }
}
