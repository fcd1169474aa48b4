//! The program the hook's command runs: that the harness finds it, and that the agent cannot
//! swap it. The harness runs the hook as the agent's own user, so a `sayso` that user can
//! rewrite (in `~/.cargo/bin`, say), or replace by renaming something in a folder above it,
//! or put earlier on the PATH, is a program the agent chooses: one that answers every call
//! with an allow. These are risks, not failures: the hook runs and is obeyed until then.
//!
//! The walk is done against `writable` (in `check`: access(2), or owning the file, since an
//! owner may chmod it), so the tests can say what the user may write (as root, access(2)
//! allows everything).

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::unistd::geteuid;

use super::Finding;
use super::writable::can_write;
use crate::hook::call::Harness;

/// Whether this user may write `path` (a file, or a folder to make, rename or remove entries
/// in); false for what does not exist.
pub type Writable<'a> = &'a dyn Fn(&Path) -> bool;

/// The findings about the hook's program, as this process's user and PATH see it.
pub fn check(command: &str, harness: Harness) -> Vec<Finding> {
    let writable = |p: &Path| can_write(p);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let entries: Vec<PathBuf> = std::env::split_paths(&path).collect();
    findings(command, harness, &entries, &writable)
}

/// `check` on a given PATH and access.
pub fn findings(
    command: &str,
    harness: Harness,
    path: &[PathBuf],
    writable: Writable,
) -> Vec<Finding> {
    let program = command.split_whitespace().next().unwrap_or_default();
    if program.is_empty() {
        return vec![Finding::fail(
            "the hook's command is empty",
            "reinstall the hook",
        )];
    }
    let (found, before) = if program.contains('/') {
        let p = PathBuf::from(program);
        (p.is_file().then_some(p), &[][..])
    } else {
        match path.iter().position(|d| d.join(program).is_file()) {
            Some(i) => (Some(path[i].join(program)), &path[..i]),
            None => (None, path),
        }
    };
    let Some(found) = found else {
        return vec![Finding::fail(
            format!(
                "`{program}` {}; the harness cannot start the hook (some harnesses then block every gated tool, others run it ungated)",
                if program.contains('/') {
                    "does not exist"
                } else {
                    "is not on this PATH"
                }
            ),
            "install sayso on the PATH the harness starts with, or reinstall with --command /absolute/path/to/sayso",
        )];
    };
    let mut out = vec![Finding::ok(format!("`{program}` is {}", found.display()))];
    let fix_path = format!(
        "install sayso where the agent's user cannot write, owned by root (`install -m 0755 sayso /usr/local/bin/`), and point the hook at it: `sayso hook install {h} --command '/usr/local/bin/sayso hook {h}'`",
        h = harness.as_str()
    );
    if let Some(how) = replaceable(&found, writable) {
        out.push(Finding::risk(
            format!(
                "this user can replace {}, the program the hook runs ({how}); the agent could put there a program that allows every call",
                found.display()
            ),
            fix_path,
        ));
    }
    let planted: Vec<String> = before
        .iter()
        .filter_map(|dir| {
            if dir.is_relative() || dir.as_os_str().is_empty() {
                // The harness runs the hook in the project, which the agent writes.
                return Some(format!(
                    "{:?} (relative: the hook's working directory)",
                    dir.as_os_str()
                ));
            }
            replaceable(&dir.join(program), writable)
                .map(|how| format!("{} ({how})", dir.display()))
        })
        .collect();
    if !planted.is_empty() {
        let own = found.parent().unwrap_or(Path::new("/"));
        out.push(Finding::risk(
            format!(
                "PATH entries before {} that this user can write into: {}; a `{program}` the agent puts there runs instead of sayso's",
                own.display(),
                planted.join(", ")
            ),
            format!(
                "give the hook's command an absolute path (`sayso hook install {h} --command '{} hook {h}'`), or take those entries off the PATH the harness starts with",
                found.display(),
                h = harness.as_str()
            ),
        ));
    }
    out
}

/// How this user could put another file at `path`, following its symbolic links: write the
/// file itself, or write a folder on the way to it (and so rename what is there, or make
/// what is missing). `None` when it cannot.
fn replaceable(path: &Path, writable: Writable) -> Option<String> {
    let mut chain = vec![path.to_path_buf()];
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&at) else {
            break;
        };
        at = at.parent().unwrap_or(Path::new("/")).join(target);
        chain.push(at.clone());
    }
    if let Ok(real) = std::fs::canonicalize(path)
        && !chain.contains(&real)
    {
        chain.push(real);
    }
    let target = chain.last().expect("the chain starts with the path");
    if target.exists() && writable(target) {
        return Some(format!("it can write {}", target.display()));
    }
    for p in &chain {
        let mut entry = p.as_path();
        while let Some(dir) = entry.parent() {
            if dir.as_os_str().is_empty() {
                break;
            }
            if writable(dir) && !sticky_keeps(dir, entry) {
                let name = entry.file_name().unwrap_or(OsStr::new(""));
                return Some(format!(
                    "it can write {}, where {} is",
                    dir.display(),
                    if entry.symlink_metadata().is_ok() {
                        format!("{name:?}")
                    } else {
                        format!("{name:?} can be made")
                    }
                ));
            }
            entry = dir;
        }
    }
    None
}

/// Whether a sticky folder (`/tmp`) keeps this user from renaming `entry` away: only its
/// owner, the folder's owner and root may. A missing entry can be made all the same.
fn sticky_keeps(dir: &Path, entry: &Path) -> bool {
    let Ok(d) = dir.metadata() else {
        return false;
    };
    let Ok(e) = entry.symlink_metadata() else {
        return false;
    };
    let me = geteuid().as_raw();
    d.permissions().mode() & 0o1000 != 0 && me != 0 && d.uid() != me && e.uid() != me
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder tree of its own under the temporary directory, removed on drop.
    struct Tree(PathBuf);

    impl Tree {
        fn new() -> Tree {
            let p = std::env::temp_dir().join(format!("sayso-program-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(p.join("root/bin")).unwrap();
            std::fs::create_dir_all(p.join("home/bin")).unwrap();
            std::fs::write(p.join("root/bin/sayso"), "#!/bin/sh\n").unwrap();
            Tree(std::fs::canonicalize(p).unwrap())
        }
        fn at(&self, rel: &str) -> PathBuf {
            self.0.join(rel)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// This user may write under `home/` only.
    fn home_only(tree: &Tree) -> impl Fn(&Path) -> bool + '_ {
        move |p: &Path| p.starts_with(tree.at("home")) && p.exists()
    }

    fn risks(findings: &[Finding]) -> Vec<&str> {
        findings
            .iter()
            .filter(|f| f.level == super::super::Level::Risk)
            .map(|f| f.text.as_str())
            .collect()
    }

    #[test]
    fn a_program_out_of_reach_is_no_risk() {
        let t = Tree::new();
        let path = vec![t.at("root/bin")];
        let w = home_only(&t);
        let f = findings("sayso hook claude", Harness::Claude, &path, &w);
        assert!(risks(&f).is_empty(), "{f:?}");
        assert_eq!(
            f[0].text,
            format!("`sayso` is {}", t.at("root/bin/sayso").display())
        );
    }

    #[test]
    fn a_program_in_a_folder_the_user_writes_is_a_risk() {
        let t = Tree::new();
        std::fs::write(t.at("home/bin/sayso"), "#!/bin/sh\n").unwrap();
        let path = vec![t.at("home/bin"), t.at("root/bin")];
        let w = home_only(&t);
        let f = findings("sayso hook claude", Harness::Claude, &path, &w);
        let r = risks(&f);
        assert_eq!(r.len(), 1, "{f:?}");
        assert!(
            r[0].contains("this user can replace") && r[0].contains("home/bin/sayso"),
            "{r:?}"
        );
        assert!(f.iter().any(|f| {
            f.fix
                .as_deref()
                .is_some_and(|x| x.contains("--command '/usr/local/bin/sayso hook claude'"))
        }));
    }

    #[test]
    fn a_link_is_followed_to_where_it_points_and_judged_at_each_step() {
        let t = Tree::new();
        // A root-owned link to a program the user can rewrite: a risk.
        std::fs::create_dir_all(t.at("root/links")).unwrap();
        std::fs::write(t.at("home/bin/real-sayso"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink(t.at("home/bin/real-sayso"), t.at("root/links/sayso")).unwrap();
        let w = home_only(&t);
        let f = findings(
            "sayso hook codex",
            Harness::Codex,
            &[t.at("root/links")],
            &w,
        );
        assert!(risks(&f).iter().any(|r| r.contains("home/bin")), "{f:?}");
        // A link in the user's folder to the root-owned program: the link can be replaced.
        let link = t.at("home/bin/sayso");
        std::os::unix::fs::symlink(t.at("root/bin/sayso"), &link).unwrap();
        let f = findings("sayso hook codex", Harness::Codex, &[t.at("home/bin")], &w);
        assert!(
            risks(&f)
                .iter()
                .any(|r| r.contains("it can write") && r.contains("home/bin")),
            "{f:?}"
        );
        // The same link named by an absolute path is judged the same way.
        let cmd = format!("{} hook codex", link.display());
        let f = findings(&cmd, Harness::Codex, &[], &w);
        assert_eq!(risks(&f).len(), 1, "{f:?}");
    }

    #[test]
    fn a_folder_above_the_program_that_the_user_writes_is_a_risk() {
        let t = Tree::new();
        std::fs::create_dir_all(t.at("home/tools")).unwrap();
        std::fs::write(t.at("home/tools/sayso"), "#!/bin/sh\n").unwrap();
        // The user may write only `home` itself: rename `tools` away, make a new one.
        let top = t.at("home");
        let w = move |p: &Path| p == top;
        let f = findings(
            "sayso hook claude",
            Harness::Claude,
            &[t.at("home/tools")],
            &w,
        );
        let r = risks(&f);
        assert!(r.len() == 1 && r[0].contains("\"tools\""), "{f:?}");
    }

    #[test]
    fn path_entries_before_the_program_that_the_user_writes_are_named() {
        let t = Tree::new();
        let path = vec![
            t.at("root/empty"),   // missing, and its folder is not the user's: fine
            t.at("home/bin"),     // the user's: a `sayso` put here wins
            t.at("home/not-yet"), // missing, but the user can make it
            PathBuf::from("."),   // the working directory
            t.at("root/bin"),
            t.at("home/after"), // after the program: does not matter
        ];
        let w = home_only(&t);
        let f = findings("sayso hook gemini", Harness::Gemini, &path, &w);
        let r = risks(&f);
        assert_eq!(r.len(), 1, "{f:?}");
        let text = r[0];
        assert!(
            text.contains(&t.at("home/bin").display().to_string()),
            "{text}"
        );
        assert!(text.contains("not-yet"), "{text}");
        assert!(text.contains("\".\" (relative"), "{text}");
        assert!(
            !text.contains("root/empty") && !text.contains("after"),
            "{text}"
        );
        assert!(
            f.iter()
                .any(|f| f.fix.as_deref().is_some_and(|x| x.contains(&format!(
                    "--command '{} hook gemini'",
                    t.at("root/bin/sayso").display()
                )))),
            "{f:?}"
        );
        // An absolute command does not search the PATH.
        let cmd = format!("{} hook gemini", t.at("root/bin/sayso").display());
        assert!(risks(&findings(&cmd, Harness::Gemini, &path, &w)).is_empty());
    }

    #[test]
    fn a_program_not_found_fails_as_before() {
        let f = findings("sayso hook claude", Harness::Claude, &[], &|_: &Path| false);
        assert_eq!(f.len(), 1);
        assert!(f[0].text.contains("is not on this PATH"), "{f:?}");
        let f = findings("  ", Harness::Claude, &[], &|_: &Path| false);
        assert!(f[0].text.contains("empty"), "{f:?}");
    }
}
