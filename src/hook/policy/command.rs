//! How a rule's `command` pattern meets a command read with the shell's grammar
//! (`domain::shell`): by what runs, not by how it is spelled.
//!
//! An allow rule is held to the letter: it matches a simple command only as written, with no
//! wrapper, assignment, file redirection or word known only when it runs, so `git status*`
//! never allows `GIT_DIR=x git status`, `sudo git status` or `./git status`. A deny or ask
//! rule catches every reading of it: its canonical form (the program by its base name, one
//! space between words), a known program's subcommand past its options (`git -C . push`),
//! its options in one order (`rm -fr`, `rm -r -f` and `rm --recursive --force` read as
//! `rm -rf`), and the command any later word of it starts (`flock /tmp/l git push`).
//! A part whose program the rule names and that has a word known only when it runs
//! (`rm $FLAGS x`) is caught too.

use crate::domain::shell::{Part, base, has_subcommands, subcommand_reading};

use super::super::glob::Glob;

/// How many later words of a part are tried as the start of a command it runs.
const MAX_INNER_STARTS: usize = 32;

/// A rule's `command`, compiled.
#[derive(Debug, Clone)]
pub struct CommandPattern {
    /// The pattern as written.
    glob: Glob,
    /// The pattern with its options put in one order, when it names a program.
    normal: Option<Glob>,
    /// The program it names, when its first word is plain.
    program: Option<String>,
}

impl CommandPattern {
    pub fn new(pattern: &str) -> CommandPattern {
        let words: Vec<&str> = pattern.split_whitespace().collect();
        let program = words
            .first()
            .filter(|w| !w.contains(['*', '?']))
            .map(|w| base(w).to_string());
        CommandPattern {
            glob: Glob::new(pattern),
            normal: program.as_ref().map(|_| Glob::new(&normal_pattern(&words))),
            program,
        }
    }

    /// Whether the whole text matches as written (a pattern that spans several commands,
    /// `curl*|*sh`).
    pub fn matches_text(&self, text: &str) -> bool {
        self.glob.matches(text)
    }

    /// An allow rule's reading: the part exactly as written.
    pub fn allows(&self, part: &Part) -> bool {
        part.wrappers.is_empty()
            && !part.assigns
            && !part.redirects_files
            && !part.dynamic()
            && self.glob.matches(&part.literal())
    }

    /// A deny or ask rule's reading: any reading of the part.
    pub fn catches(&self, part: &Part) -> bool {
        if part.dynamic() && self.program.as_deref().is_some_and(|p| p == part.program()) {
            return true;
        }
        readings(part).iter().any(|(reading, head)| {
            self.glob.matches(reading)
                || self.normal.as_ref().is_some_and(|n| {
                    let words: Vec<&str> = reading.split(' ').collect();
                    n.matches(&normal_form(&words, *head))
                })
        })
    }
}

/// The readings of a part, each with how many of its first words name the program and its
/// subcommand.
fn readings(part: &Part) -> Vec<(String, usize)> {
    let mut out = vec![(part.canonical(), 1)];
    if let Ok(Some(words)) = subcommand_reading(part) {
        out.push((words.join(" "), 2));
    }
    let starts = part
        .argv
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, a)| !a.text.starts_with('-') && !a.text.contains('=') && !a.text.is_empty())
        .take(MAX_INNER_STARTS);
    for (i, _) in starts {
        let inner = Part {
            argv: part.argv[i..].to_vec(),
            ..part.clone()
        };
        out.push((inner.canonical(), 1));
        if let Ok(Some(words)) = subcommand_reading(&inner) {
            out.push((words.join(" "), 2));
        }
    }
    out
}

/// A pattern's words with its options in one order; its last `*` kept last.
fn normal_pattern(words: &[&str]) -> String {
    let mut words: Vec<&str> = words.to_vec();
    let mut tail = "";
    if let Some(last) = words.last_mut()
        && let Some(stripped) = last.strip_suffix('*')
    {
        *last = stripped;
        tail = "*";
        if stripped.is_empty() {
            words.pop();
            tail = " *";
        }
    }
    let head = if words.len() > 1 && has_subcommands(base(words[0])) && !words[1].starts_with('-') {
        2
    } else {
        1
    };
    let mut out = normal_form(&words, head.min(words.len()));
    out.push_str(tail);
    out
}

/// `words` with the first `head` kept in place, then every option (short clusters split,
/// a few long names brought to their short ones) sorted, then the other words in order.
fn normal_form(words: &[&str], head: usize) -> String {
    let head = head.min(words.len());
    let program = words.first().map(|w| base(w)).unwrap_or_default();
    let sub = if head > 1 { words[1] } else { "" };
    let mut options: Vec<String> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut rest = words[head..].iter();
    while let Some(w) = rest.next() {
        if *w == "--" {
            operands.extend(rest.by_ref());
            break;
        }
        if w.starts_with("--") && w.len() > 2 {
            options.push(synonym(program, sub, w).to_string());
        } else if w.len() > 1
            && w.starts_with('-')
            && w[1..].chars().all(|c| c.is_ascii_alphabetic())
        {
            for c in w[1..].chars() {
                options.push(synonym(program, sub, &format!("-{c}")).to_string());
            }
        } else if program == "git" && sub == "push" && w.len() > 1 && w.starts_with('+') {
            // `git push origin +main` force-pushes main.
            options.push("--force".into());
            operands.push(&w[1..]);
        } else {
            operands.push(w);
        }
    }
    options.sort();
    options.dedup();
    let mut out: Vec<&str> = words[..head].to_vec();
    out[0] = program;
    out.extend(options.iter().map(String::as_str));
    out.extend(operands);
    out.join(" ")
}

/// The one spelling of an option that has several.
fn synonym<'a>(program: &str, sub: &str, option: &'a str) -> &'a str {
    match (program, sub, option) {
        ("rm", _, "-R" | "--recursive") => "-r",
        ("rm", _, "--force") => "-f",
        ("chmod" | "chown" | "chgrp", _, "--recursive") => "-R",
        ("git", "push", "-f") => "--force",
        ("git", "push", "-d") => "--delete",
        ("git", "clean" | "branch", "--force") => "-f",
        _ => option,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::shell::parse;

    fn catches(pattern: &str, command: &str) -> bool {
        let p = CommandPattern::new(pattern);
        parse(command).parts.iter().any(|part| p.catches(part))
    }

    #[test]
    fn options_are_read_in_one_order() {
        assert_eq!(normal_pattern(&["rm", "-rf*"]), "rm -f -r*");
        assert_eq!(normal_pattern(&["rm", "-rf", "*"]), "rm -f -r *");
        assert_eq!(
            normal_pattern(&["git", "push", "--force*"]),
            "git push --force*"
        );
        for c in [
            "rm -fr x",
            "rm -r -f x",
            "rm --recursive --force x",
            "rm -Rf x",
            "rm x -rf",
        ] {
            assert!(catches("rm -rf*", c), "{c}");
        }
        for c in [
            "git push -f",
            "git push origin main --force",
            "git push origin +main",
        ] {
            assert!(catches("git push --force*", c), "{c}");
        }
    }

    #[test]
    fn a_deny_rule_catches_the_act_however_it_is_spelled() {
        for c in [
            "git  push --force origin main",
            "/usr/bin/git push --force origin main",
            "GIT_TRACE=0 git push --force origin main",
            "git -C . push --force origin main",
            "\\git push --force origin main",
            "flock /tmp/l git push --force origin main",
            "git $(echo push) --force",
        ] {
            assert!(catches("git push*", c), "{c}");
        }
        assert!(!catches("git push*", "git status"));
        assert!(!catches("git push*", "git log --grep push"));
    }

    #[test]
    fn an_allow_rule_holds_to_the_letter() {
        let p = CommandPattern::new("git status*");
        let allows = |c: &str| parse(c).parts.iter().all(|part| p.allows(part));
        assert!(allows("git status --short"));
        assert!(allows("git 'status'"));
        for c in [
            "GIT_DIR=x git status",
            "sudo git status",
            "./git status",
            "/tmp/git status",
            "git status > ~/.bashrc",
            "git status $X",
        ] {
            assert!(!allows(c), "{c}");
        }
    }
}
