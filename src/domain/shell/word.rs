//! One word as the shell passes it: quotes and escapes undone, and whether its value is only
//! known when it runs. The commands it runs inside (`$(…)`, backquotes) are handed back to
//! be read as commands of their own.

use brush_parser::ParserOptions;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};

use super::Arg;

/// A word read, and the command texts substituted inside it, each with its byte offset in
/// the command. An offset of `usize::MAX` marks a command run where it cannot be taken
/// apart (inside a parameter expansion or arithmetic): the reader records a doubt.
pub struct Read {
    pub arg: Arg,
    pub inner: Vec<(String, usize)>,
    /// A substituted text is not the command's own bytes (backquotes with escapes undone),
    /// so offsets inside it do not point into the command.
    pub moved: bool,
}

/// Reads the word `raw`, which starts at byte `at` of the command.
pub fn read(raw: &str, at: usize, options: &ParserOptions) -> Read {
    let mut text = String::new();
    let mut dynamic = false;
    let mut inner = Vec::new();
    match word::parse(raw, options) {
        Ok(pieces) => pieces_into(&pieces, raw, at, false, &mut text, &mut dynamic, &mut inner),
        // A word the grammar split but cannot read: as written, known only when it runs.
        Err(_) => {
            text.push_str(raw);
            dynamic = true;
        }
    }
    // A substituted text that is not the bytes at its place in the word (backquotes, once
    // their escapes are undone) cannot be pointed into.
    let moved = inner.iter().any(|(t, off)| {
        let local = off.wrapping_sub(at);
        *off != usize::MAX && raw.get(local..local + t.len()) != Some(t.as_str())
    });
    Read {
        arg: Arg {
            text,
            span: at..at + raw.len(),
            dynamic,
        },
        inner,
        moved,
    }
}

fn pieces_into(
    pieces: &[WordPieceWithSource],
    raw: &str,
    at: usize,
    quoted: bool,
    text: &mut String,
    dynamic: &mut bool,
    inner: &mut Vec<(String, usize)>,
) {
    for p in pieces {
        let source = raw.get(p.start_index..p.end_index).unwrap_or_default();
        match &p.piece {
            WordPiece::Text(s) => {
                if !quoted && (is_pattern(s) || is_brace_expansion(s)) {
                    *dynamic = true;
                }
                text.push_str(s);
            }
            WordPiece::SingleQuotedText(s) => text.push_str(s),
            WordPiece::AnsiCQuotedText(s) => match ansi_c(s) {
                Some(decoded) => text.push_str(&decoded),
                None => {
                    text.push_str(source);
                    *dynamic = true;
                }
            },
            WordPiece::DoubleQuotedSequence(seq) | WordPiece::GettextDoubleQuotedSequence(seq) => {
                pieces_into(seq, raw, at, true, text, dynamic, inner)
            }
            WordPiece::TildeExpansion(_) => text.push_str(source),
            WordPiece::EscapeSequence(s) => {
                // `\x` is `x`; a backslash before a line break joins the lines.
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some('\\'), Some('\n')) => {}
                    (Some('\\'), Some(c)) => {
                        text.push(c);
                        text.push_str(chars.as_str());
                    }
                    _ => text.push_str(s),
                }
            }
            WordPiece::CommandSubstitution(cmd) => {
                // `$(` is two bytes before the command's own text.
                inner.push((cmd.clone(), at + p.start_index + 2));
                text.push_str(source);
                *dynamic = true;
            }
            WordPiece::BackquotedCommandSubstitution(cmd) => {
                inner.push((unescape_backquoted(cmd), at + p.start_index + 1));
                text.push_str(source);
                *dynamic = true;
            }
            WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => {
                // `${X:-$(…)}` and `$(( $(…) ))` run a command this reading does not take
                // apart: a doubt.
                // Past its own `$(`/`${`.
                let inside = source.get(2..).unwrap_or_default();
                if inside.contains("$(") || inside.contains('`') || inside.contains("<(") {
                    inner.push((String::new(), usize::MAX));
                }
                text.push_str(source);
                *dynamic = true;
            }
        }
    }
}

/// Whether unquoted text is a file-name pattern the shell expands (`*`, `?`, `[…]`).
fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?']) || s.find('[').is_some_and(|i| s[i + 1..].contains(']'))
}

/// Whether unquoted text holds a brace expansion (`{a,b}`, `{1..3}`).
fn is_brace_expansion(s: &str) -> bool {
    s.find('{').is_some_and(|i| {
        let rest = &s[i + 1..];
        rest.find('}')
            .is_some_and(|j| rest[..j].contains(',') || rest[..j].contains(".."))
    })
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the character.
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('$' | '`' | '\\')) {
            out.push(chars.next().unwrap_or('\\'));
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of `$'…'`, its escapes decoded as bash does; `None` for an escape it does not
/// know, so the word stays "known only when it runs".
fn ansi_c(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            _ => return None,
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max && chars.peek().is_some_and(|d| d.is_digit(radix)) {
            digits.push(chars.next()?);
        }
        let n = u32::from_str_radix(&digits, radix).ok()?;
        out.push(char::from_u32(n)?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(raw: &str) -> (String, bool) {
        let r = read(raw, 0, &ParserOptions::default());
        (r.arg.text, r.arg.dynamic)
    }

    #[test]
    fn quotes_and_escapes_are_undone() {
        assert_eq!(text("'git'"), ("git".into(), false));
        assert_eq!(text("g\"i\"t"), ("git".into(), false));
        assert_eq!(text("\\git"), ("git".into(), false));
        assert_eq!(text("$'\\x67it'"), ("git".into(), false));
        assert_eq!(text("$'\\147it'"), ("git".into(), false));
        assert_eq!(text("~/important"), ("~/important".into(), false));
    }

    #[test]
    fn what_expands_when_it_runs_is_dynamic() {
        assert!(text("$HOME").1);
        assert!(text("\"$(which git)\"").1);
        assert!(text("`which git`").1);
        assert!(text("gi?").1);
        assert!(text("{git,x}").1);
        assert!(!text("'*'").1);
        assert!(!text("[").1);
    }

    #[test]
    fn substitutions_are_handed_back_with_their_place() {
        let cmd = "x$(rm -rf ~)";
        let r = read(cmd, 10, &ParserOptions::default());
        assert_eq!(r.inner, vec![("rm -rf ~".to_string(), 13)]);
    }
}
