//! Layers look down only (docs/ARCHITECTURE.md): read from the `crate::…` paths in `src/`,
//! every top-level module uses only the modules below it, modules of one rank use none of
//! each other, so no import circle spans two of them; and no source file is over 600 lines.

use std::collections::BTreeMap;
use std::path::Path;

/// The rooms of `src/`, top first; each may use only what stands on a later line.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["app"],
    &["config"],
    &["hook"],
    &["client"],
    &["http", "mcp", "notify"],
    &["web"],
    &["service"],
    &["render", "wake"],
    &["storage"],
    &["metrics"],
    &["domain"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|rank| rank.contains(&module))
}

/// Each top-level module's uses of another: (used module → the first file and line).
fn uses() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let module = rel
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for (at, _) in code.match_indices("crate::") {
                    let used: String = code[at + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !used.is_empty() && used != module {
                        out.entry(module.clone())
                            .or_default()
                            .entry(used)
                            .or_insert_with(|| format!("src/{rel}:{}", n + 1));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    for (module, used) in uses() {
        let Some(from) = rank(&module) else {
            wrong.push(format!("src/{module} is in no layer of tests/layers.rs"));
            continue;
        };
        for (target, at) in used {
            match rank(&target) {
                Some(to) if to > from => {}
                Some(_) => wrong.push(format!("{module} uses {target}, not below it ({at})")),
                None => wrong.push(format!("{module} uses crate::{target}, in no layer ({at})")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows that do not look down:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reading_sees_the_arrows_it_checks() {
    // The service uses the store, and the pages' edge the service: a reading that found
    // nothing would pass every module.
    let uses = uses();
    assert!(uses["service"].contains_key("storage"));
    assert!(uses["http"].contains_key("service"));
    assert!(uses.keys().all(|m| rank(m).is_some()), "{:?}", uses.keys());
}

#[test]
fn no_source_file_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut stack: Vec<_> = [
        "src",
        "bench/src",
        "clients/python/src",
        "clients/typescript/src",
    ]
    .iter()
    .map(|dir| root.join(dir))
    .collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "rs" || e == "py" || e == "ts")
            {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 600 {
                    long.push(format!("{} ({lines} lines)", path.display()));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over 600 lines:\n{}",
        long.join("\n")
    );
}
