//! Layers look down only (docs/ARCHITECTURE.md): read from the `crate::…` paths in `src/`,
//! every top-level module uses only the modules below it, modules of one rank use none of
//! each other, so no import circle spans two of them. Inside a room, read from every path
//! into the crate (`crate::`, `super::`, `self::`, a child module's, followed through
//! re-exports to the file that defines the name), no files use each other in a circle. And
//! no source file is over 600 lines.

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
    &["chat"],
    &["web", "courier"],
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
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (rel, text) in sources() {
        let module = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if module == "lib" {
            continue;
        }
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
    out
}

/// Every source file of `src/` (but `main.rs`, its own crate): its path under `src/` and text.
fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .to_string();
                if rel != "main.rs" {
                    out.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
    }
    out.sort();
    out
}

/// A file's module path: `hook/doctor/mod.rs` is `hook::doctor`, `lib.rs` the crate root.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The code's words and punctuation with their line numbers, without comments, strings and
/// characters (`::` is one token).
fn tokens(text: &str) -> Vec<(String, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut line, mut i) = (Vec::new(), 1, 0);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"'
            || (c == 'r' && matches!(at(i + 1), '"' | '#') && !ident_char(at(i.wrapping_sub(1))))
        {
            // A string, raw (`r#"…"#`) or not: skipped to its end.
            let raw = c == 'r';
            let mut hashes = 0;
            if raw {
                i += 1;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                if at(i) != '"' {
                    continue; // `r#ident`, a raw identifier
                }
            }
            i += 1;
            while i < chars.len() {
                if chars[i] == '\\' && !raw {
                    i += 2;
                    continue;
                }
                line += usize::from(chars[i] == '\n');
                if chars[i] == '"' && (i + 1..=i + hashes).all(|j| at(j) == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('a', '\n') is skipped; a lifetime ('a) is not code we read.
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ident_char(c) {
            let start = i;
            while ident_char(at(i)) {
                i += 1;
            }
            out.push((chars[start..i].iter().collect(), line));
        } else if c == ':' && at(i + 1) == ':' {
            out.push(("::".into(), line));
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push((c.to_string(), line));
            }
            i += 1;
        }
    }
    out
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads a path or a use tree starting at `tokens[i]` (`a::b::{c, d::*}`): its leaves, each
/// with the name it is known by (`as` renames), and where the reading stopped.
fn use_tree(
    tokens: &[(String, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let tok = |i: usize| tokens.get(i).map_or("", |t| t.0.as_str());
    loop {
        match tok(i) {
            "{" => {
                i += 1;
                while !matches!(tok(i), "}" | "") {
                    i = use_tree(tokens, i, prefix.clone(), out);
                    if tok(i) == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push((prefix, "*".into()));
                return i + 1;
            }
            word if word.starts_with(|c: char| c.is_alphabetic() || c == '_') => {
                prefix.push(word.to_string());
                i += 1;
                if tok(i) == "::" {
                    i += 1;
                    continue;
                }
                let mut name = word.to_string();
                if tok(i) == "as" {
                    name = tok(i + 1).to_string();
                    i += 2;
                }
                if name == "self" {
                    prefix.pop();
                    name = prefix.last().cloned().unwrap_or_default();
                }
                out.push((prefix, name));
                return i;
            }
            _ => {
                if !prefix.is_empty() {
                    let name = prefix.last().cloned().unwrap();
                    out.push((prefix, name));
                }
                return i;
            }
        }
    }
}

/// One file read for its paths into the crate.
struct Read {
    /// Absolute module paths it names (`crate::a::b::C` is `[a, b, C]`), with their lines.
    paths: Vec<(Vec<String>, usize)>,
    /// What it re-exports (`pub use`): the name and the absolute path, or `*` for a glob.
    exports: Vec<(String, Vec<String>)>,
    /// The names of the items it defines.
    items: Vec<String>,
}

/// Reads a file's paths: `crate::…`, `super::…`, `self::…` and those through a child module
/// (`child::…`), with a `mod name { … }` inside the file changing what `super` and `self` are.
fn read(
    tokens: &[(String, usize)],
    module: &[String],
    modules: &BTreeMap<Vec<String>, String>,
) -> Read {
    let mut read = Read {
        paths: Vec::new(),
        exports: Vec::new(),
        items: Vec::new(),
    };
    let tok = |i: usize| tokens.get(i).map_or("", |t| t.0.as_str());
    let mut here = module.to_vec();
    let mut inline: Vec<usize> = Vec::new(); // the brace depth each inline module opened at
    let (mut depth, mut i) = (0, 0);
    while i < tokens.len() {
        match tok(i) {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if inline.last() == Some(&depth) {
                    inline.pop();
                    here.pop();
                }
            }
            "mod" if tok(i + 2) == "{" => {
                here.push(tok(i + 1).to_string());
                inline.push(depth);
            }
            "struct" | "enum" | "fn" | "trait" | "type" | "const" | "static" | "mod" | "union" => {
                read.items.push(tok(i + 1).to_string())
            }
            _ => {}
        }
        let word = tok(i);
        let mut child = here.clone();
        child.push(word.to_string());
        let starts = tok(i + 1) == "::"
            && tok(i.wrapping_sub(1)) != "::"
            && (matches!(word, "crate" | "super" | "self") || modules.contains_key(&child));
        if !starts {
            i += 1;
            continue;
        }
        let export = tok(i.wrapping_sub(1)) == "use"
            && (tok(i.wrapping_sub(2)) == "pub" || tok(i.wrapping_sub(2)) == ")");
        let line = tokens[i].1;
        let mut leaves = Vec::new();
        i = use_tree(tokens, i, Vec::new(), &mut leaves);
        for (path, name) in leaves {
            let mut abs = here.clone();
            let mut rest = path.as_slice();
            match rest[0].as_str() {
                "crate" => {
                    abs.clear();
                    rest = &rest[1..];
                }
                "self" => rest = &rest[1..],
                _ => {}
            }
            while rest.first().is_some_and(|s| s == "super") {
                abs.pop();
                rest = &rest[1..];
            }
            abs.extend(rest.iter().cloned());
            if export {
                read.exports.push((name, abs.clone()));
            }
            read.paths.push((abs, line));
        }
    }
    read
}

/// The file a path lands in: the deepest module file on it, followed through re-exports.
fn landing(
    path: &[String],
    reads: &BTreeMap<String, Read>,
    modules: &BTreeMap<Vec<String>, String>,
) -> String {
    // The deepest module file on a path, and the name after it.
    let file_of = |path: &[String]| {
        let n = (0..=path.len())
            .rev()
            .find(|n| modules.contains_key(&path[..*n]))
            .unwrap();
        (modules[&path[..n]].clone(), path.get(n).cloned())
    };
    let mut path = path.to_vec();
    // Eight re-exports in a row end the walk, should two ever name each other.
    for _ in 0..8 {
        let (file, name) = file_of(&path);
        let Some(name) = name else { return file };
        let read = &reads[&file];
        let next = read
            .exports
            .iter()
            .find(|(export, _)| *export == name)
            .map(|(_, to)| to.clone())
            .or_else(|| {
                read.exports
                    .iter()
                    .filter(|(export, _)| export == "*")
                    .find_map(|(_, from)| {
                        let from = modules.get(from)?;
                        reads[from].items.contains(&name).then(|| {
                            let mut to = module_of(from);
                            to.push(name.clone());
                            to
                        })
                    })
            });
        match next {
            Some(to) if to != path => path = to,
            _ => return file,
        }
    }
    file_of(&path).0
}

/// The uses between files of one top-level room: (file → used file → the line of the first use).
fn file_uses() -> BTreeMap<String, BTreeMap<String, usize>> {
    let sources = sources();
    let modules: BTreeMap<Vec<String>, String> = sources
        .iter()
        .map(|(rel, _)| (module_of(rel), rel.clone()))
        .collect();
    let reads: BTreeMap<String, Read> = sources
        .iter()
        .map(|(rel, text)| (rel.clone(), read(&tokens(text), &module_of(rel), &modules)))
        .collect();
    let room = |rel: &str| module_of(rel).first().cloned();
    let mut out: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (rel, read) in &reads {
        for (path, line) in &read.paths {
            let to = landing(path, &reads, &modules);
            // A file may use the modules it is part of (`super::Store` in an `impl` of the
            // parent's type): that is the tree, not a circle.
            let within = module_of(rel).starts_with(&module_of(&to));
            if !within && room(&to) == room(rel) && room(rel).is_some() {
                out.entry(rel.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(*line);
            }
        }
    }
    out
}

/// The circles among files: each strongly connected group of more than one file, as one
/// cycle through it read off the uses (`a.rs:3 → b.rs`), shortest first from its first file.
fn circles(uses: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<String> {
    let next = |file: &str| uses.get(file).into_iter().flat_map(|to| to.keys().cloned());
    let reaches = |from: &str| {
        let mut seen = BTreeMap::new(); // file → the file it was reached from
        let mut queue = std::collections::VecDeque::from([from.to_string()]);
        while let Some(file) = queue.pop_front() {
            for to in next(&file) {
                if !seen.contains_key(&to) {
                    seen.insert(to.clone(), file.clone());
                    queue.push_back(to);
                }
            }
        }
        seen
    };
    let mut out = Vec::new();
    let mut placed: Vec<String> = Vec::new();
    for file in uses.keys() {
        if placed.contains(file) {
            continue;
        }
        let from_here = reaches(file);
        let Some(_) = from_here.get(file) else {
            continue;
        };
        // The shortest way back to `file`, walked backwards through who reached whom.
        let mut ring = vec![file.clone()];
        let mut at = from_here[file].clone();
        while at != *file {
            ring.push(at.clone());
            at = from_here[&at].clone();
        }
        ring.push(file.clone());
        ring.reverse();
        let group: Vec<String> = from_here
            .keys()
            .filter(|f| reaches(f).contains_key(file))
            .cloned()
            .collect();
        placed.extend(group.iter().cloned());
        let hops: Vec<String> = ring
            .windows(2)
            .map(|w| format!("src/{}:{}", w[0], uses[&w[0]][&w[1]]))
            .collect();
        out.push(format!(
            "{} files: {} → src/{}\n    ({})",
            group.len(),
            hops.join(" → "),
            file,
            group.join(", ")
        ));
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
    // Inside a room: a `super::` path, a re-export followed to its file, a `crate::` path.
    let files = file_uses();
    assert!(files["domain/decision.rs"].contains_key("domain/spec.rs"));
    assert!(files["mcp/handler.rs"].contains_key("mcp/results.rs"));
    assert!(files["hook/install.rs"].contains_key("hook/files.rs"));
}

#[test]
fn a_circle_is_named_by_its_files_and_lines() {
    let mut uses: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (from, to, line) in [
        ("a.rs", "b.rs", 3),
        ("b.rs", "a.rs", 5),
        ("c.rs", "a.rs", 1),
    ] {
        uses.entry(from.into()).or_default().insert(to.into(), line);
    }
    assert_eq!(
        circles(&uses),
        ["2 files: src/a.rs:3 → src/b.rs:5 → src/a.rs\n    (a.rs, b.rs)"]
    );
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

#[test]
fn no_files_of_one_room_use_each_other_in_a_circle() {
    let circles = circles(&file_uses());
    assert!(
        circles.is_empty(),
        "import circles between files of one room:\n{}",
        circles.join("\n")
    );
}
