//! What in a shell command deserves a second look before it is allowed: it deletes, force-
//! pushes, runs code it downloads, runs as the administrator, drops data, writes over a disk,
//! publishes, destroys infrastructure. Each finding has a one-line reason a tired person
//! reads at a glance, and the part of the command it points at, which the page marks.
//!
//! This is a reading aid, never a gate: the policy decides what is asked, and a command
//! with no finding may still do harm. It reads the command as the policy does, with the
//! shell's grammar (`domain::shell`): each simple command that runs, past its wrappers, so
//! a comment, a quote or a path cannot hide what a mark points at.

use std::ops::Range;

use super::shell::{self, Doubt};

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
struct Word {
    /// The word without its quotes.
    text: String,
    span: Range<usize>,
}

/// A simple command: its wrappers, its words (the program first), and whether its input is
/// piped from the one before.
#[derive(Debug, Clone)]
struct Simple {
    wrappers: Vec<Word>,
    words: Vec<Word>,
    piped_from: Option<usize>,
    /// The `|` that feeds it, when piped.
    pipe: Option<Range<usize>>,
    /// The simple command in one of whose words it runs.
    inside: Option<usize>,
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
const UNREADABLE: &str = "The shell cannot read this command: what it runs cannot be told";

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
    let parsed = shell::parse(command);
    if parsed.doubts.iter().any(|d| {
        matches!(
            d,
            Doubt::Unparsed(_)
                | Doubt::TooLong
                | Doubt::TooNested
                | Doubt::TooSlow
                | Doubt::ControlCharacter(_)
        )
    }) {
        let whole = 0..command.len();
        add(UNREADABLE, vec![whole]);
    }
    let simples = simples(&parsed);
    for (index, s) in simples.iter().enumerate() {
        let words = &s.words;
        for w in &s.wrappers {
            if matches!(base(&w.text), "sudo" | "doas") {
                add(SUDO, vec![w.span.clone()]);
            }
        }
        let Some(prog) = words.first() else {
            continue;
        };
        let args = &words[1..];
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
            "eval" if fetches(&simples, index) => add(DOWNLOADED, vec![span(prog)]),
            _ => {}
        }
        if SHELLS.contains(&name) {
            // `sh -c "$(curl …)"`, `bash <(curl …)`: the fetched text is the program.
            if fetches(&simples, index) {
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
        .filter_map(|s| s.words.first())
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

/// Whether a command fetched from the network runs inside the words of simple command
/// `at`: `sh -c "$(curl …)"`, `bash <(wget …)`, a backquoted fetch.
fn fetches(simples: &[Simple], at: usize) -> bool {
    simples.iter().enumerate().any(|(i, s)| {
        let mut inside = s.inside;
        while let Some(outer) = inside {
            if outer == at {
                return is_fetcher(&simples[i]);
            }
            inside = simples[outer].inside;
        }
        false
    })
}

fn is_fetcher(s: &Simple) -> bool {
    s.words
        .first()
        .is_some_and(|w| FETCHERS.contains(&base(&w.text).to_ascii_lowercase().as_str()))
}

/// Whether any command of the pipeline that ends at `last` fetches from the network.
fn pipeline_fetches(simples: &[Simple], last: usize) -> bool {
    let mut at = Some(last);
    while let Some(i) = at {
        if is_fetcher(&simples[i]) {
            return true;
        }
        at = simples[i].piped_from;
    }
    false
}

/// The simple commands the shell's reading found.
fn simples(parsed: &shell::Parsed) -> Vec<Simple> {
    let word = |a: &shell::Arg| Word {
        text: a.text.clone(),
        span: a.span.clone(),
    };
    parsed
        .parts
        .iter()
        .map(|p| Simple {
            wrappers: p.wrappers.iter().map(word).collect(),
            words: p.argv.iter().map(word).collect(),
            piped_from: p.piped_from,
            pipe: p.pipe.clone(),
            inside: p.inside,
        })
        .collect()
}

#[cfg(test)]
mod tests;
