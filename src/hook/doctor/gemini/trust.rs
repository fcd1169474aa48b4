//! gemini-cli's folder trust: whether it reads the project's settings (and so its hook) at
//! all. It decides once, before it reads its command line, from the environment, the system,
//! user and default settings and `trustedFolders.json`, never from the project's settings.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::super::{Finding, Setup, real};
use super::{Scopes, read_json};

/// Whether gemini-cli will call the project trusted, with the finding that says so.
pub(super) fn trust(
    setup: &Setup,
    env: &dyn Fn(&str) -> Option<String>,
    scopes: &Scopes,
    gemini_dir: &Path,
    found: &mut Vec<Finding>,
) -> bool {
    let project = setup.project.display().to_string();
    let untrusted = |why: String, found: &mut Vec<Finding>| {
        let fix = format!(
            "add \"{project}\": \"TRUST_FOLDER\" to {} (or start gemini-cli with GEMINI_CLI_TRUST_WORKSPACE=true); never --skip-trust",
            trusted_folders_file(env, gemini_dir).display()
        );
        if setup.user {
            found.push(Finding::advice(
                format!(
                    "{why}: `gemini -p` stops there unless started with --skip-trust (which still runs your hook), and gemini-cli skips its configured hooks in an untrusted folder"
                ),
                fix,
            ));
        } else {
            found.push(Finding::fail(
                format!(
                    "{why}: gemini-cli ignores the project's settings there. `gemini -p` stops with an error, and with --skip-trust it runs without the project's hook: every tool ungated"
                ),
                fix,
            ));
        }
        false
    };
    if env("GEMINI_RESTRICTED_MODE").as_deref() == Some("true")
        || env("GEMINI_CLI_TRUST_WORKSPACE").as_deref() == Some("false")
    {
        return untrusted(
            "GEMINI_RESTRICTED_MODE=true or GEMINI_CLI_TRUST_WORKSPACE=false here: no folder is trusted".into(),
            found,
        );
    }
    if env("GEMINI_CLI_TRUST_WORKSPACE").as_deref() == Some("true") {
        found.push(Finding::ok(
            "GEMINI_CLI_TRUST_WORKSPACE=true here: gemini-cli trusts the project and reads its hooks (when it starts with this environment)",
        ));
        return true;
    }
    if let Some((file, Value::Bool(false))) = scopes.get(&["security", "folderTrust", "enabled"]) {
        found.push(Finding::ok(format!(
            "{}: folder trust is off, so gemini-cli reads every project's settings",
            file.display()
        )));
        return true;
    }
    let file = trusted_folders_file(env, gemini_dir);
    let rules = read_json(&file).unwrap_or(Value::Null);
    match trust_level(&rules, &setup.project) {
        Some((rule, level)) if level != "DO_NOT_TRUST" => {
            found.push(Finding::ok(format!(
                "{} trusts {project} ({rule}: {level}): gemini-cli reads the project's hooks",
                file.display()
            )));
            true
        }
        Some((rule, _)) => untrusted(
            format!("{} marks {rule} DO_NOT_TRUST", file.display()),
            found,
        ),
        None => untrusted(
            format!("{project} is not a trusted folder of gemini-cli's"),
            found,
        ),
    }
}

fn trusted_folders_file(env: &dyn Fn(&str) -> Option<String>, gemini_dir: &Path) -> PathBuf {
    env("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| gemini_dir.join("trustedFolders.json"))
}

/// The rule of `trustedFolders.json` that decides for `project` (the longest that holds it;
/// `TRUST_PARENT` trusts the folder the path is in), and its level.
fn trust_level(rules: &Value, project: &Path) -> Option<(String, String)> {
    let project = real(project);
    rules
        .as_object()?
        .iter()
        .filter_map(|(path, level)| {
            let level = level.as_str()?;
            let p = Path::new(path);
            let effective = if level == "TRUST_PARENT" {
                p.parent().unwrap_or(p)
            } else {
                p
            };
            project
                .starts_with(real(effective))
                .then(|| (path.clone(), level.to_string()))
        })
        .max_by_key(|(path, _)| path.len())
}
