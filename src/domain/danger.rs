//! What in a shell command deserves a second look before it is allowed: it deletes, force-
//! pushes, runs code it downloads, runs as the administrator, drops data, writes over a disk,
//! publishes, destroys infrastructure. Each finding has a one-line reason a tired person
//! reads at a glance, and the part of the command it points at, which the page marks.
//!
//! This is a reading aid, never a gate: the policy decides what is asked, and a command
//! with no finding may still do harm. It reads the command as the shell would split it
//! (simple commands joined by `;`, `&&`, `||`, `|`, `&`, line breaks and `$(`), well enough
//! to point at what matters, not to parse every shell.

use std::ops::Range;

/// One thing the command does that deserves a second look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Danger {
    /// One plain line: "Deletes files and folders recursively".
    pub reason: &'static str,
    /// The byte ranges of the command it points at (the program and the option that make it
    /// dangerous).
    pub spans: Vec<Range<usize>>,
}

/// A word of the command and where it is.
#[derive(Debug, Clone)]
struct Word<'a> {
    /// The word without its quotes.
    text: String,
    span: Range<usize>,
    raw: &'a str,
}

/// A simple command: its words, and whether its input is piped from the one before.
#[derive(Debug, Clone)]
struct Simple<'a> {
    words: Vec<Word<'a>>,
    piped_from: Option<usize>,
    /// The `|` that feeds it, when piped.
    pipe: Option<Range<usize>>,
}

const DELETES: &str = "Deletes files and folders recursively";
const DELETES_FILES: &str = "Deletes files without asking";
const FORCE_PUSH: &str = "Force-pushes: can overwrite commits others pushed";
const DELETES_REMOTE: &str = "Deletes a branch or tag on the remote";
const DISCARDS: &str = "Throws away uncommitted work";
const DELETES_BRANCH: &str = "Deletes a branch, even if not merged";
const DOWNLOADED: &str = "Runs code downloaded from the internet";
const PIPED_SHELL: &str = "Runs whatever the command before it prints, as a program";
const SUDO: &str = "Runs as the administrator (sudo)";
const DROPS: &str = "Drops or wipes data in a database";
const DISK: &str = "Writes over a disk or file system";
const PUBLISHES: &str = "Publishes to a public registry (cannot be taken back)";
const DESTROYS: &str = "Destroys infrastructure or cluster resources";
const PERMISSIONS: &str = "Changes permissions of a whole tree";

/// Programs that run code handed to them on their input or as a string.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "php",
    "pwsh", "iex",
];
/// Programs that fetch from the network.
const FETCHERS: &[&str] = &["curl", "wget", "fetch", "iwr", "invoke-webrequest", "http"];
/// Programs that send SQL (or a store's own commands) to a database.
const DATABASE_CLIENTS: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "sqlite3",
    "sqlcmd",
    "mongosh",
    "mongo",
    "redis-cli",
    "duckdb",
    "clickhouse-client",
    "cockroach",
    "pgcli",
    "mycli",
    "litecli",
];
/// Programs that run the rest of their words as another command.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nohup", "time", "nice", "xargs", "exec",
];

/// What deserves a second look in `command`, each reason once, in the order found.
pub fn dangers(command: &str) -> Vec<Danger> {
    let mut found: Vec<Danger> = Vec::new();
    let mut add = |reason: &'static str, spans: Vec<Range<usize>>| match found
        .iter_mut()
        .find(|d| d.reason == reason)
    {
        Some(d) => d.spans.extend(spans),
        None => found.push(Danger { reason, spans }),
    };
    let simples = split(command);
    for s in &simples {
        let words = &s.words;
        let Some(at) = program_at(words) else {
            continue;
        };
        for w in &words[..at] {
            if matches!(base(&w.text), "sudo" | "doas") {
                add(SUDO, vec![w.span.clone()]);
            }
        }
        let prog = &words[at];
        let args = &words[at + 1..];
        let name = base(&prog.text);
        let span = |w: &Word| w.span.clone();
        match name {
            "su" => add(SUDO, vec![span(prog)]),
            "rm" => {
                let recursive = args
                    .iter()
                    .filter(|w| is_flag(w, 'r') || is_flag(w, 'R') || w.text == "--recursive");
                let mut spans: Vec<_> = recursive.map(span).collect();
                if !spans.is_empty() {
                    spans.insert(0, span(prog));
                    add(DELETES, spans);
                } else if let Some(f) = args.iter().find(|w| is_flag(w, 'f') || w.text == "--force")
                {
                    add(DELETES_FILES, vec![span(prog), span(f)]);
                }
            }
            "find" => {
                if let Some(w) = args.iter().find(|w| w.text == "-delete") {
                    add(DELETES, vec![span(prog), span(w)]);
                }
                if let Some(i) = args
                    .iter()
                    .position(|w| w.text == "-exec" || w.text == "-execdir")
                    && args.get(i + 1).is_some_and(|w| base(&w.text) == "rm")
                {
                    add(DELETES, vec![span(&args[i]), span(&args[i + 1])]);
                }
            }
            "shred" | "wipefs" => add(DISK, vec![span(prog)]),
            "git" => git(prog, args, &mut add),
            "dd" => {
                if let Some(w) = args.iter().find(|w| w.text.starts_with("of=/dev/")) {
                    add(DISK, vec![span(prog), span(w)]);
                }
            }
            n if n.starts_with("mkfs") => add(DISK, vec![span(prog)]),
            "chmod" | "chown" | "chgrp" => {
                if let Some(w) = args
                    .iter()
                    .find(|w| is_flag(w, 'R') || w.text == "--recursive")
                {
                    add(PERMISSIONS, vec![span(prog), span(w)]);
                }
            }
            "npm" | "pnpm" | "yarn" | "cargo" | "gem" | "twine" | "poetry" => {
                // A rehearsal publishes nothing: flagging it would teach the
                // person to skim past the flag.
                let rehearsal = args.iter().any(|w| w.text == "--dry-run");
                if let Some(w) = args
                    .iter()
                    .find(|w| !rehearsal && (w.text == "publish" || w.text == "upload"))
                {
                    add(PUBLISHES, vec![span(prog), span(w)]);
                }
            }
            "terraform" | "tofu" | "pulumi" => {
                if let Some(w) = args.iter().find(|w| w.text == "destroy") {
                    add(DESTROYS, vec![span(prog), span(w)]);
                }
            }
            "kubectl" | "helm" => {
                if let Some(w) = args
                    .iter()
                    .find(|w| w.text == "delete" || w.text == "uninstall")
                {
                    add(DESTROYS, vec![span(prog), span(w)]);
                }
            }
            "eval" if fetches(args) => add(DOWNLOADED, vec![span(prog)]),
            _ => {}
        }
        if SHELLS.contains(&name) {
            // `sh -c "$(curl …)"`, `bash <(curl …)`: the fetched text is the program.
            if fetches(args) {
                add(DOWNLOADED, vec![span(prog)]);
            }
            // `curl … | sh`: the piped text is the program, unless the shell is given a
            // script file of its own.
            let runs_input = args
                .iter()
                .all(|w| w.text.starts_with('-') || w.text == "-");
            if let (Some(from), true) = (s.piped_from, runs_input) {
                let pipe = s.pipe.clone().into_iter().chain([span(prog)]).collect();
                if pipeline_fetches(&simples, from) {
                    add(DOWNLOADED, pipe);
                } else {
                    add(PIPED_SHELL, pipe);
                }
            }
        }
    }
    // SQL usually reaches a database client as a quoted argument or on its input: looked
    // for when a client is part of the command, so `grep 'DROP TABLE' *.sql` is left alone.
    if simples
        .iter()
        .flat_map(|s| &s.words)
        .any(|w| DATABASE_CLIENTS.contains(&base(&w.text)))
    {
        sql(command, &mut add);
    }
    found
}

/// A git command's findings.
fn git(prog: &Word, args: &[Word], add: &mut impl FnMut(&'static str, Vec<Range<usize>>)) {
    // Options before the subcommand (`git -C dir push`) are skipped, with their values.
    let mut i = 0;
    while i < args.len() && args[i].text.starts_with('-') {
        i += if matches!(args[i].text.as_str(), "-C" | "-c") {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[(i + 1).min(args.len())..];
    let span = |w: &Word| w.span.clone();
    match sub.text.as_str() {
        "push" => {
            if let Some(w) = rest.iter().find(|w| {
                w.text.starts_with("--force")
                    || is_flag(w, 'f')
                    || (w.text.starts_with('+') && w.text.len() > 1)
                    || w.text == "--mirror"
            }) {
                add(FORCE_PUSH, vec![span(prog), span(sub), span(w)]);
            }
            if let Some(w) = rest.iter().find(|w| {
                w.text == "--delete"
                    || is_flag(w, 'd')
                    || w.text == "--prune"
                    || (w.text.starts_with(':') && w.text.len() > 1)
            }) {
                add(DELETES_REMOTE, vec![span(prog), span(sub), span(w)]);
            }
        }
        "reset" => {
            if let Some(w) = rest.iter().find(|w| w.text == "--hard") {
                add(DISCARDS, vec![span(prog), span(sub), span(w)]);
            }
        }
        "clean" => {
            if let Some(w) = rest.iter().find(|w| is_flag(w, 'f') || w.text == "--force") {
                add(DISCARDS, vec![span(prog), span(sub), span(w)]);
            }
        }
        // `git checkout .`, `git checkout -- file`, `git restore file`: the file's
        // uncommitted changes are gone.
        "checkout" => {
            if let Some(w) = rest.iter().find(|w| w.text == "." || w.text == "--") {
                add(DISCARDS, vec![span(prog), span(sub), span(w)]);
            }
        }
        "restore"
            if !rest.is_empty() && !rest.iter().any(|w| w.text == "--staged" || w.text == "-S") =>
        {
            add(DISCARDS, vec![span(prog), span(sub)]);
        }
        "branch" => {
            let force = rest.iter().any(|w| w.text == "--force" || w.text == "-f");
            if let Some(w) = rest
                .iter()
                .find(|w| w.text == "-D" || (force && (w.text == "-d" || w.text == "--delete")))
            {
                add(DELETES_BRANCH, vec![span(prog), span(sub), span(w)]);
            }
        }
        _ => {}
    }
}

/// `DROP TABLE`, `DROP DATABASE`, `TRUNCATE`, a `DELETE FROM` without `WHERE`, Redis's
/// `FLUSHALL`: anywhere in the command, quoted or not.
fn sql(command: &str, add: &mut impl FnMut(&'static str, Vec<Range<usize>>)) {
    let upper = command.to_ascii_uppercase();
    let bytes = upper.as_bytes();
    let word_at = |at: usize, w: &str| {
        upper[at..].starts_with(w)
            && (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
            && bytes
                .get(at + w.len())
                .is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'_')
    };
    let mut spans = Vec::new();
    for (at, _) in upper.match_indices("DROP") {
        if !word_at(at, "DROP") {
            continue;
        }
        let after = upper[at + 4..].trim_start();
        let gap = upper.len() - at - 4 - after.len();
        for what in ["TABLE", "DATABASE", "SCHEMA", "COLLECTION"] {
            if after.starts_with(what) {
                spans.push(at..at + 4 + gap + what.len());
            }
        }
    }
    for (at, _) in upper.match_indices("TRUNCATE") {
        if word_at(at, "TRUNCATE") {
            spans.push(at..at + 8);
        }
    }
    for (at, _) in upper.match_indices("DELETE FROM") {
        let statement_end = upper[at..].find(';').map_or(upper.len(), |e| at + e);
        if word_at(at, "DELETE") && !upper[at..statement_end].contains("WHERE") {
            spans.push(at..at + 11);
        }
    }
    for (at, _) in upper
        .match_indices("FLUSHALL")
        .chain(upper.match_indices("FLUSHDB"))
    {
        spans.push(
            at..at
                + if upper[at..].starts_with("FLUSHALL") {
                    8
                } else {
                    7
                },
        );
    }
    if !spans.is_empty() {
        spans.sort_by_key(|r| r.start);
        add(DROPS, spans);
    }
}

/// Whether a word is a short option holding `flag` (`-rf` holds `r` and `f`).
fn is_flag(w: &Word, flag: char) -> bool {
    let t = w.text.as_str();
    t.len() > 1 && t.starts_with('-') && !t.starts_with("--") && t[1..].contains(flag)
}

/// The program's name without its directory: `/usr/bin/rm` is `rm`.
fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The index of the program among the words: past variable assignments and the wrappers
/// that run the rest (`sudo`, `env`, `nohup`, …) with their options.
fn program_at(words: &[Word]) -> Option<usize> {
    let mut i = 0;
    while i < words.len() {
        let t = &words[i].text;
        if t.contains('=') && !t.starts_with('-') && !t.starts_with('=') {
            i += 1;
        } else if WRAPPERS.contains(&base(t)) {
            i += 1;
            while i < words.len() && words[i].text.starts_with('-') {
                // `sudo -u root`: an option that takes a value.
                let takes = matches!(words[i].text.as_str(), "-u" | "-g" | "-n" | "-I");
                i += if takes { 2 } else { 1 };
            }
        } else {
            return Some(i);
        }
    }
    None
}

/// Whether the words run something fetched: a `$(curl …)`, `<(wget …)` or backquoted fetch
/// among them.
fn fetches(args: &[Word]) -> bool {
    args.iter().any(|w| {
        let raw = w.raw;
        ["$(", "<(", "`"].iter().any(|open| {
            raw.split(open).skip(1).any(|inner| {
                FETCHERS.contains(&base(inner.split_whitespace().next().unwrap_or("")))
            })
        })
    })
}

/// Whether any command of the pipeline that ends at `last` fetches from the network.
fn pipeline_fetches(simples: &[Simple], last: usize) -> bool {
    let mut at = Some(last);
    while let Some(i) = at {
        let s = &simples[i];
        if let Some(p) = program_at(&s.words)
            && FETCHERS.contains(&base(&s.words[p].text).to_ascii_lowercase().as_str())
        {
            return true;
        }
        at = s.piped_from;
    }
    false
}

/// The command split into simple commands and words. Quotes group words (and are taken
/// off); `$(…)`, `<(…)` and backquotes stay inside the word they are part of, and their
/// inside is also split as commands of its own, so `echo $(rm -rf x)` is seen.
fn split(command: &str) -> Vec<Simple<'_>> {
    let mut out = Vec::new();
    split_into(command, 0, &mut out);
    out
}

fn split_into<'a>(command: &'a str, offset: usize, out: &mut Vec<Simple<'a>>) {
    let b = command.as_bytes();
    let mut words: Vec<Word<'a>> = Vec::new();
    let mut piped_from: Option<usize> = None;
    let mut pipe: Option<Range<usize>> = None;
    let mut i = 0;
    let finish = |words: &mut Vec<Word<'a>>,
                  piped_from: Option<usize>,
                  pipe: Option<Range<usize>>,
                  out: &mut Vec<Simple<'a>>| {
        if !words.is_empty() {
            out.push(Simple {
                words: std::mem::take(words),
                piped_from,
                pipe,
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() && c != b'\n' {
            i += 1;
            continue;
        }
        if matches!(c, b';' | b'&' | b'|' | b'\n' | b'(' | b')') {
            let start = i;
            while i < b.len() && matches!(b[i], b';' | b'&' | b'|') {
                i += 1;
            }
            i = i.max(start + 1);
            finish(&mut words, piped_from, pipe.take(), out);
            let op = &command[start..i];
            if op == "|" || op == "|&" {
                piped_from = out.len().checked_sub(1);
                pipe = Some(offset + start..offset + i);
            } else {
                piped_from = None;
            }
            continue;
        }
        if matches!(c, b'<' | b'>') && b.get(i + 1) != Some(&b'(') {
            // A redirection: its target is a file, not a word of the command.
            i += 1;
            while i < b.len() && matches!(b[i], b'<' | b'>' | b'&') {
                i += 1;
            }
            while i < b.len() && b[i].is_ascii_whitespace() && b[i] != b'\n' {
                i += 1;
            }
            let (_, end) = read_word(command, i);
            i = end;
            continue;
        }
        let (text, end) = read_word(command, i);
        let raw = &command[i..end];
        // What runs inside `$(…)`, `<(…)` and backquotes is split on its own.
        for open in ["$(", "<(", "`"] {
            let mut from = 0;
            while let Some(at) = raw[from..].find(open) {
                let inner_start = from + at + open.len();
                let close = if open == "`" { "`" } else { ")" };
                let inner_end = raw[inner_start..]
                    .find(close)
                    .map_or(raw.len(), |e| inner_start + e);
                split_into(&raw[inner_start..inner_end], offset + i + inner_start, out);
                from = inner_end.min(raw.len());
                if from >= raw.len() {
                    break;
                }
                from += 1;
            }
        }
        words.push(Word {
            text,
            span: offset + i..offset + end,
            raw,
        });
        i = end;
    }
    finish(&mut words, piped_from, pipe, out);
}

/// One word from `at`: its text with quotes and backslashes taken off, and where it ends.
/// `$(…)` and `<(…)` are read whole, nested parentheses counted.
fn read_word(command: &str, at: usize) -> (String, usize) {
    let b = command.as_bytes();
    let mut text = String::new();
    let mut i = at;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' => {
                let close = c;
                i += 1;
                let start = i;
                while i < b.len() && b[i] != close {
                    if close == b'"' && b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                text.push_str(&command[start..i.min(b.len())]);
                i = (i + 1).min(b.len());
            }
            b'\\' => {
                if let Some(next) = command[i + 1..].chars().next() {
                    text.push(next);
                    i += 1 + next.len_utf8();
                } else {
                    i += 1;
                }
            }
            b'$' | b'<' if b.get(i + 1) == Some(&b'(') => {
                let start = i;
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                text.push_str(&command[start..i]);
            }
            c if c.is_ascii_whitespace()
                || matches!(c, b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')') =>
            {
                break;
            }
            _ => {
                let ch = command[i..].chars().next().unwrap_or(' ');
                text.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    (text, i)
}

#[cfg(test)]
mod tests;
