//! A shell command laid out for the approval page: split into pieces to colour (the
//! program, flags, quoted strings, variables, operators), the parts a danger points at marked
//! as such, and every hidden character shown as its code point in a piece of its own.

use std::ops::Range;

use crate::domain::danger::Danger;
use crate::render::visible::{is_hidden, marker};

/// The class of a piece that a danger points at.
pub const DANGER: &str = "danger";
/// The class of a hidden character's marker.
pub const HIDDEN: &str = "hidden";
/// The class of a plain word: each word is a piece of its own, so that the page can keep it
/// whole on a line (a browser would otherwise break `--force` after a hyphen).
pub const WORD: &str = "w";

/// The command as (class, text) pieces, in order; their texts joined are the command with
/// its hidden characters shown as markers.
pub fn pieces(command: &str, dangers: &[Danger]) -> Vec<(&'static str, String)> {
    let marked: Vec<Range<usize>> = dangers.iter().flat_map(|d| d.spans.clone()).collect();
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut at = 0usize;
    for (class, text) in highlight(command) {
        // Split each piece where a danger's span starts or ends, and around hidden
        // characters.
        let mut run = String::new();
        let mut run_class = class;
        for c in text.chars() {
            let in_danger = marked.iter().any(|r| r.contains(&at));
            let want = if in_danger { DANGER } else { class };
            if is_hidden(c) {
                push(&mut out, run_class, std::mem::take(&mut run));
                out.push((HIDDEN, marker(c)));
            } else {
                if want != run_class {
                    push(&mut out, run_class, std::mem::take(&mut run));
                    run_class = want;
                }
                run.push(c);
            }
            at += c.len_utf8();
        }
        push(&mut out, run_class, run);
    }
    out
}

fn push(out: &mut Vec<(&'static str, String)>, class: &'static str, text: String) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some((last, t)) if *last == class && class != HIDDEN => t.push_str(&text),
        _ => out.push((class, text)),
    }
}

/// Splits a shell command into pieces to colour: the program of each simple command,
/// flags, quoted strings, variables, and the operators that chain or redirect.
pub fn highlight(command: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    let mut expect_program = true;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let class = if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            ""
        } else if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && c == '"' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            expect_program = false;
            "str"
        } else if "|&;<>()".contains(c) {
            while i < chars.len() && "|&;<>".contains(chars[i]) {
                i += 1;
            }
            i = i.max(start + 1);
            expect_program = !chars[start..i].iter().all(|c| *c == '<' || *c == '>');
            "op"
        } else {
            while i < chars.len() && !chars[i].is_whitespace() && !"|&;<>()'\"".contains(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word.starts_with('$') {
                "var"
            } else if expect_program && !word.contains('=') {
                expect_program = false;
                "cmd"
            } else if word.starts_with('-') {
                "flag"
            } else {
                WORD
            }
        };
        let text: String = chars[start..i].iter().collect();
        match out.last_mut() {
            Some((last, t)) if *last == class && class.is_empty() => t.push_str(&text),
            _ => out.push((class, text)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::danger::dangers;

    fn classed<'a>(pieces: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
        pieces
            .iter()
            .filter(|(c, _)| !c.is_empty() && *c != WORD)
            .map(|(c, t)| (*c, t.as_str()))
            .collect()
    }

    #[test]
    fn a_command_is_split_into_what_to_colour() {
        let h = highlight("cd build && rm -rf \"out dir\" $HOME/x > log");
        assert_eq!(
            classed(&h),
            [
                ("cmd", "cd"),
                ("op", "&&"),
                ("cmd", "rm"),
                ("flag", "-rf"),
                ("str", "\"out dir\""),
                ("var", "$HOME/x"),
                ("op", ">"),
            ]
        );
        let whole: String = h.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(whole, "cd build && rm -rf \"out dir\" $HOME/x > log");
    }

    #[test]
    fn what_a_danger_points_at_is_marked() {
        let command = "git status && git push --force origin main";
        let p = pieces(command, &dangers(command));
        assert_eq!(
            classed(&p),
            [
                ("cmd", "git"),
                ("op", "&&"),
                ("danger", "git"),
                ("danger", "push"),
                ("danger", "--force"),
            ]
        );
        let whole: String = p.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(whole, command);
    }

    #[test]
    fn hidden_characters_are_shown_in_pieces_of_their_own() {
        let command = "ls\u{200B}\u{202E}hs|x";
        let p = pieces(command, &[]);
        let whole: String = p.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(whole, "ls⟨U+200B⟩⟨U+202E⟩hs|x");
        assert_eq!(p.iter().filter(|(c, _)| *c == HIDDEN).count(), 2, "{p:?}");
    }
}
