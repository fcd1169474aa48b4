//! The project a call belongs to, found walking up from the call's working directory, so a
//! `cd` into a subfolder neither drops the project's policy nor lands in another project's
//! allowances.
//!
//! The project root is the nearest folder, from the working directory up, that holds
//! `.sayso/policy.json` (the project's own policy) or `.git` (a directory, or the file a
//! worktree or submodule has); it scopes the allowances. The policy is the nearest
//! `.sayso/policy.json` from the working directory up, even above a `.git`: a repository
//! made inside a project (`git init sub`) starts a project of its own for allowances, but
//! does not shed the policy around it. A working directory under neither is outside any
//! project: the user-wide policy applies, and the folder stands for itself in allowances.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::domain::new_decision::MAX_PROJECT_CHARS;

/// Where a call stands: its project root and the policy file of its project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The project root, or the working directory itself when it is outside any project.
    pub root: PathBuf,
    /// Whether `root` is a project's root (`false`: the working directory, in no project).
    pub in_project: bool,
    /// The nearest `.sayso/policy.json` from the working directory up.
    pub policy: Option<PathBuf>,
}

/// The project of a working directory. Symbolic links are resolved first (a link into a
/// project is that project); a directory that does not exist is walked as written. `None`
/// for a relative path, which names no place the hook can be sure of.
pub fn place_of(cwd: &str) -> Option<Place> {
    let given = Path::new(cwd);
    if !given.is_absolute() {
        return None;
    }
    let real = std::fs::canonicalize(given).unwrap_or_else(|_| given.to_path_buf());
    let mut root = None;
    for dir in real.ancestors() {
        let policy = dir.join(".sayso").join("policy.json");
        if policy.is_file() {
            return Some(Place {
                root: root.unwrap_or_else(|| dir.to_path_buf()),
                in_project: true,
                policy: Some(policy),
            });
        }
        // `exists`, not `is_dir`: a worktree's or a submodule's `.git` is a file.
        if root.is_none() && dir.join(".git").exists() {
            root = Some(dir.to_path_buf());
        }
    }
    Some(Place {
        in_project: root.is_some(),
        root: root.unwrap_or(real),
        policy: None,
    })
}

/// The project a call is filed under and its allowances are scoped by: the root's absolute
/// path, so two folders of the same name never share an allowance. A path the server would
/// not keep as it is (longer than a project may be, or ending in a space, which it trims)
/// keeps its end (the name the pages show) after a digest of the whole, so two paths that
/// differ anywhere still differ.
pub fn project_name(place: &Place) -> String {
    let path = place.root.to_string_lossy();
    if path.chars().count() <= MAX_PROJECT_CHARS && path.trim() == path {
        return path.into_owned();
    }
    let digest = Sha256::digest(path.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let head = format!("/…{hex}…");
    let chars: Vec<char> = path.trim_end().chars().collect();
    let keep = (MAX_PROJECT_CHARS - head.chars().count()).min(chars.len());
    let tail: String = chars[chars.len() - keep..].iter().collect();
    format!("{head}{tail}")
}

/// Refuses a policy file someone else owns: on a shared machine another user could put a
/// `.sayso/policy.json` in a folder above yours (`/tmp`), which the walk up would find.
#[cfg(unix)]
pub fn check_owner(policy: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(policy)
        .map_err(|e| format!("cannot read the policy {}: {e}", policy.display()))?;
    let me = nix::unistd::getuid().as_raw();
    if meta.uid() == me || meta.uid() == 0 {
        return Ok(());
    }
    Err(format!(
        "the policy {} belongs to another user (uid {}); a project's policy must be yours",
        policy.display(),
        meta.uid()
    ))
}

#[cfg(not(unix))]
pub fn check_owner(_policy: &Path) -> Result<(), String> {
    Ok(())
}

/// The project of a working directory, as the approval and allowances name it.
pub fn project_of(cwd: &str) -> Option<String> {
    place_of(cwd).map(|p| project_name(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("sayso-project-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::canonicalize(d).unwrap()
    }

    fn place(cwd: &Path) -> Place {
        place_of(cwd.to_str().unwrap()).unwrap()
    }

    #[test]
    fn a_subfolder_belongs_to_the_repository_root() {
        let top = dir();
        let repo = top.join("shop");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        for cwd in [repo.clone(), repo.join("src"), repo.join("src/deep")] {
            let p = place(&cwd);
            assert_eq!(p.root, repo, "from {}", cwd.display());
            assert!(p.in_project);
            assert_eq!(p.policy, None);
        }
    }

    #[test]
    fn the_nearest_policy_folder_is_the_root() {
        let top = dir();
        std::fs::create_dir_all(top.join(".git")).unwrap();
        std::fs::create_dir_all(top.join("app/.sayso")).unwrap();
        std::fs::write(top.join("app/.sayso/policy.json"), "{}").unwrap();
        std::fs::create_dir_all(top.join("app/web")).unwrap();
        let p = place(&top.join("app/web"));
        assert_eq!(p.root, top.join("app"));
        assert_eq!(p.policy, Some(top.join("app/.sayso/policy.json")));
        // A `.sayso` folder without a policy file is no root.
        std::fs::create_dir_all(top.join("lib/.sayso")).unwrap();
        assert_eq!(place(&top.join("lib")).root, top);
    }

    #[test]
    fn a_repository_made_inside_keeps_the_policy_around_it() {
        let top = dir();
        std::fs::create_dir_all(top.join(".sayso")).unwrap();
        std::fs::write(top.join(".sayso/policy.json"), "{}").unwrap();
        std::fs::create_dir_all(top.join("sub/.git")).unwrap();
        std::fs::create_dir_all(top.join("sub/deep")).unwrap();
        let p = place(&top.join("sub/deep"));
        assert_eq!(p.root, top.join("sub"));
        assert_eq!(p.policy, Some(top.join(".sayso/policy.json")));
    }

    #[test]
    fn a_worktree_git_file_marks_its_root() {
        let top = dir();
        let wt = top.join("wt");
        std::fs::create_dir_all(wt.join("sub")).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: /elsewhere/.git/worktrees/wt\n").unwrap();
        assert_eq!(place(&wt.join("sub")).root, wt);
    }

    #[test]
    fn outside_any_project_the_folder_stands_for_itself() {
        let top = dir();
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        let p = place(&top.join("a/b"));
        // The temporary folder may sit under a repository of its own; only then is it one.
        if !p.in_project {
            assert_eq!(p.root, top.join("a/b"));
            assert_eq!(p.policy, None);
        }
        assert_eq!(place_of("relative/path"), None);
    }

    #[test]
    fn a_link_into_a_project_is_that_project() {
        let top = dir();
        std::fs::create_dir_all(top.join("shop/.git")).unwrap();
        std::fs::create_dir_all(top.join("shop/sub")).unwrap();
        std::os::unix::fs::symlink(top.join("shop/sub"), top.join("link")).unwrap();
        assert_eq!(place(&top.join("link")).root, top.join("shop"));
    }

    #[test]
    fn same_named_folders_are_different_projects() {
        let top = dir();
        for side in ["a", "b"] {
            std::fs::create_dir_all(top.join(side).join("shop/.git")).unwrap();
        }
        let a = project_of(top.join("a/shop").to_str().unwrap()).unwrap();
        let b = project_of(top.join("b/shop").to_str().unwrap()).unwrap();
        assert_ne!(a, b);
        assert!(a.ends_with("/a/shop"), "{a}");
    }

    #[test]
    fn a_long_root_is_named_within_the_limit_and_still_apart() {
        let long = |end: &str| Place {
            root: PathBuf::from(format!("/{}/{end}/shop", "x".repeat(300))),
            in_project: true,
            policy: None,
        };
        let (a, b) = (project_name(&long("a")), project_name(&long("b")));
        assert_eq!(a.chars().count(), MAX_PROJECT_CHARS);
        assert!(a.ends_with("/a/shop") && b.ends_with("/b/shop"), "{a}");
        assert_ne!(a, b);
        let c = project_name(&Place {
            root: PathBuf::from(format!("/{}/{}/a/shop", "y".repeat(150), "x".repeat(149))),
            in_project: true,
            policy: None,
        });
        assert_ne!(a, c, "same end, different start");
        // A trailing space the server would trim away is kept apart by the digest.
        let spaced = |root: &str| {
            project_name(&Place {
                root: PathBuf::from(root),
                in_project: true,
                policy: None,
            })
        };
        assert_eq!(spaced("/a/shop"), "/a/shop");
        let s = spaced("/a/shop ");
        assert!(s.starts_with("/…") && s.ends_with("/a/shop"), "{s}");
    }

    #[test]
    fn a_policy_of_your_own_counts() {
        let top = dir();
        std::fs::write(top.join("policy.json"), "{}").unwrap();
        assert_eq!(check_owner(&top.join("policy.json")), Ok(()));
    }
}
