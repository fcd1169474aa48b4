//! Every message sayso asks for is there in every language, and no language has one the
//! others lack: the ids used in `src/` and `templates/` (as `t.tr("id")`, `t.tr1("id", …)`,
//! … and the ids handed on to them) against those of each `locales/<lang>/*.ftl`, read with
//! Fluent's own parser, which must find no error either.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fluent_syntax::ast::Entry;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Each language's message ids, by language.
fn locales() -> BTreeMap<String, BTreeSet<String>> {
    let mut langs = BTreeMap::new();
    for e in std::fs::read_dir(root().join("locales")).unwrap() {
        let dir = e.unwrap().path();
        let lang = dir.file_name().unwrap().to_string_lossy().to_string();
        let mut ftl = Vec::new();
        files(&dir, &mut ftl);
        let mut ids = BTreeSet::new();
        for f in ftl
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "ftl"))
        {
            let text = std::fs::read_to_string(f).unwrap();
            let resource = fluent_syntax::parser::parse(text)
                .unwrap_or_else(|(_, errors)| panic!("{} does not parse: {errors:?}", f.display()));
            for entry in resource.body {
                if let Entry::Message(m) = entry {
                    let id = m.id.name.to_string();
                    assert!(ids.insert(id.clone()), "{}: {id} twice", lang);
                }
            }
        }
        langs.insert(lang, ids);
    }
    langs
}

/// The ids the code asks for: the first string literal after `.tr(`, `.tr1(`, `.tr2(`,
/// `.tr3(`, and, in Rust, every string literal shaped and named like an id (`kind-bool`),
/// which a lookup is handed through a variable (`let id = match … { … => "kind-bool" }`).
fn used() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut paths = Vec::new();
    files(&root().join("src"), &mut paths);
    files(&root().join("templates"), &mut paths);
    let known: BTreeSet<String> = locales().into_values().flatten().collect();
    let areas: BTreeSet<&str> = known.iter().filter_map(|id| id.split('-').next()).collect();
    for p in paths {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let rust = p.extension().is_some_and(|e| e == "rs");
        // Comments name ids as examples; only code asks for them.
        let text: String = text
            .lines()
            .filter(|l| !(rust && l.trim_start().starts_with("//")))
            .map(|l| format!("{l}\n"))
            .collect();
        let at = p.strip_prefix(root()).unwrap().display().to_string();
        for call in [".tr(", ".tr1(", ".tr2(", ".tr3("] {
            for (i, _) in text.match_indices(call) {
                let rest = text[i + call.len()..].trim_start();
                if let Some(lit) = rest.strip_prefix('"') {
                    let id = &lit[..lit.find('"').unwrap()];
                    found.entry(id.to_string()).or_insert(at.clone());
                }
            }
        }
        // Ids chosen in a `match` and then looked up: every literal that names a known
        // message in a file that looks messages up.
        if rust && (text.contains(".tr(") || text.contains(".tr1(")) {
            for lit in text.split('"').skip(1).step_by(2) {
                let shaped = lit.contains('-')
                    && lit
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
                // Its first word names one of the areas the messages are in ("feed-…").
                let prefixed = lit
                    .split('-')
                    .next()
                    .is_some_and(|first| areas.contains(first));
                if shaped && (prefixed || known.contains(lit)) {
                    found.entry(lit.to_string()).or_insert(at.clone());
                }
            }
        }
    }
    found
}

#[test]
fn every_message_is_in_every_language_and_none_is_extra() {
    let langs = locales();
    assert!(
        langs.contains_key("en") && langs.contains_key("de"),
        "{:?}",
        langs.keys()
    );
    let mut problems = Vec::new();
    for (id, at) in used() {
        for (lang, ids) in &langs {
            if !ids.contains(&id) {
                problems.push(format!(
                    "{id} (used in {at}) is missing from locales/{lang}"
                ));
            }
        }
    }
    let all: BTreeSet<&String> = langs.values().flatten().collect();
    for id in all {
        for (lang, ids) in &langs {
            if !ids.contains(id) {
                problems.push(format!(
                    "{id} is in another language but not in locales/{lang}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_finds_the_ids_in_templates_and_in_code() {
    let used = used();
    // One of each way an id is asked for, so a scanner that finds nothing cannot pass.
    for id in [
        "page-back-to-feed",
        "feed-waiting",
        "status-expired",
        "kind-bool",
    ] {
        assert!(
            used.contains_key(id),
            "{id} not found among {} ids",
            used.len()
        );
    }
}
