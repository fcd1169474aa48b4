//! Whether the hook's user can rewrite what gates it. The harness runs the hook as the agent's
//! own user, so a settings file or a policy file that user can write is one the agent can
//! write: it could take the hook out, or add an allow rule for what it wants to run. These are
//! risks, not failures: the hook still runs, and an agent that follows its instructions never
//! touches them (docs/SECURITY.md says where to put them instead).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, access, geteuid};

use super::{Finding, Setup};

pub fn check(setup: &Setup) -> Vec<Finding> {
    let mut found = Vec::new();
    if setup.settings.is_some() && can_change(&setup.settings_file) {
        found.push(Finding::risk(
            format!(
                "this user can rewrite {}, and so can the agent: it could take the hook out",
                setup.settings_file.display()
            ),
            "for an agent you do not trust, put the hook where its user cannot write (the harness's managed or system settings), or run the agent as another user",
        ));
    }
    let (policy, how) = policy_in_effect(setup);
    if can_change(&policy) {
        found.push(Finding::risk(
            format!(
                "this user can write the policy {} ({how}), and so can the agent: its allow rules would be the agent's",
                policy.display()
            ),
            "point the hook at a policy its user cannot write: `--policy FILE` in the hook's command, or SAYSO_HOOK_POLICY where the harness starts",
        ));
    }
    found
}

/// The policy file the hook reads first, and why that one: `--policy` in the hook's command,
/// else `SAYSO_HOOK_POLICY`, else the project's `.sayso/policy.json`, the nearest from the
/// project up (read before the user's own, whether it exists yet or not: the agent can make
/// it).
fn policy_in_effect(setup: &Setup) -> (PathBuf, &'static str) {
    let mut words = setup.command.split_whitespace();
    while let Some(w) = words.next() {
        if let Some(p) = w.strip_prefix("--policy=") {
            return (PathBuf::from(p), "the hook's --policy");
        }
        if w == "--policy"
            && let Some(p) = words.next()
        {
            return (PathBuf::from(p), "the hook's --policy");
        }
    }
    if let Some(p) = std::env::var_os("SAYSO_HOOK_POLICY") {
        return (PathBuf::from(p), "SAYSO_HOOK_POLICY");
    }
    // The nearest one from the project up, as the hook finds it; else where the agent can
    // make one.
    let found = setup
        .project
        .to_str()
        .and_then(crate::hook::project::place_of)
        .and_then(|p| p.policy);
    (
        found.unwrap_or_else(|| setup.project.join(".sayso").join("policy.json")),
        "the project's, read before any other",
    )
}

/// Whether this user can change `path`: write it, or make or replace it in its folder (the
/// nearest folder that exists, since missing ones can be made there).
fn can_change(path: &Path) -> bool {
    if path.exists() && can_write(path) {
        return true;
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.exists() {
            return can_write(d);
        }
        dir = d.parent();
    }
    false
}

/// Whether this user can write `path` (a file, or a folder's entries): access(2) allows it,
/// or the user owns it and so may chmod it first (root's access(2) already says all).
pub(super) fn can_write(path: &Path) -> bool {
    let me = geteuid().as_raw();
    access(path, AccessFlags::W_OK).is_ok()
        || (me != 0 && path.symlink_metadata().is_ok_and(|m| m.uid() == me))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_a_writable_folder_can_be_changed_even_before_it_exists() {
        let dir = std::env::temp_dir().join(format!("sayso-writable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(can_change(&dir.join(".sayso/policy.json")));
        assert!(!can_change(Path::new("/proc/1/nothing/policy.json")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
