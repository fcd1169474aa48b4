//! The `matcher` of a gemini-cli hook entry: a JavaScript regular expression tested against
//! the tool's name. Only the part matchers are written in is read; anything more is `None`,
//! and the doctor then says it cannot tell.

/// Whether the JavaScript regular expression `pattern` finds a match in `name`, for the
/// patterns matchers are written in: alternatives, `^`, `$`, `.`, `*`, `+`, `?` and `\`
/// escapes. `None` for anything else (groups, classes, counts).
pub(super) fn matches(pattern: &str, name: &str) -> Option<bool> {
    if pattern.contains(['(', ')', '[', ']', '{', '}']) {
        return None;
    }
    let mut any = false;
    for alt in split_alternatives(pattern) {
        let atoms = atoms(&alt)?;
        let (anchored, atoms) = match atoms.split_first() {
            Some((Atom::Start, rest)) => (true, rest.to_vec()),
            _ => (false, atoms),
        };
        let text: Vec<char> = name.chars().collect();
        let starts = if anchored { 0..1 } else { 0..text.len() + 1 };
        any |= starts.into_iter().any(|i| match_here(&atoms, &text[i..]));
    }
    Some(any)
}

fn split_alternatives(pattern: &str) -> Vec<String> {
    let mut alts = vec![String::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let last = alts.last_mut().expect("one at least");
                last.push('\\');
                if let Some(n) = chars.next() {
                    last.push(n);
                }
            }
            '|' => alts.push(String::new()),
            c => alts.last_mut().expect("one at least").push(c),
        }
    }
    alts
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Atom {
    Start,
    End,
    /// One character (`None`: any).
    Char(Option<char>, Rep),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rep {
    One,
    /// `?`
    Optional,
    /// `*`
    Any,
    /// `+`
    Many,
}

fn atoms(alt: &str) -> Option<Vec<Atom>> {
    let mut out = Vec::new();
    let mut chars = alt.chars().peekable();
    while let Some(c) = chars.next() {
        let one = match c {
            '^' if out.is_empty() => {
                out.push(Atom::Start);
                continue;
            }
            '$' if chars.peek().is_none() => {
                out.push(Atom::End);
                continue;
            }
            '^' | '$' | '*' | '+' | '?' => return None,
            '.' => None,
            '\\' => match chars.next()? {
                c if c.is_ascii_alphanumeric() => return None,
                c => Some(c),
            },
            c => Some(c),
        };
        let rep = match chars.peek() {
            Some('*') => Rep::Any,
            Some('+') => Rep::Many,
            Some('?') => Rep::Optional,
            _ => Rep::One,
        };
        if rep != Rep::One {
            chars.next();
        }
        out.push(Atom::Char(one, rep));
    }
    Some(out)
}

fn match_here(atoms: &[Atom], text: &[char]) -> bool {
    let Some((first, rest)) = atoms.split_first() else {
        return true;
    };
    let hit = |c: &char, want: &Option<char>| want.is_none_or(|w| w == *c);
    match *first {
        Atom::Start => false,
        Atom::End => text.is_empty() && rest.is_empty(),
        Atom::Char(want, Rep::One) => {
            text.first().is_some_and(|c| hit(c, &want)) && match_here(rest, &text[1..])
        }
        Atom::Char(want, Rep::Optional) => {
            (text.first().is_some_and(|c| hit(c, &want)) && match_here(rest, &text[1..]))
                || match_here(rest, text)
        }
        Atom::Char(want, rep) => {
            let run = text.iter().take_while(|c| hit(c, &want)).count();
            let least = usize::from(rep == Rep::Many);
            (least..=run).rev().any(|n| match_here(rest, &text[n..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_read_as_javascript_does() {
        assert_eq!(
            matches("run_shell_command|write_file|replace", "replace"),
            Some(true)
        );
        assert_eq!(matches("run_shell_command", "write_file"), Some(false));
        assert_eq!(matches("shell", "run_shell_command"), Some(true));
        assert_eq!(matches("^shell", "run_shell_command"), Some(false));
        assert_eq!(matches("^write_.*$", "write_file"), Some(true));
        assert_eq!(matches("file$", "write_file"), Some(true));
        assert_eq!(matches(".*", "replace"), Some(true));
        assert_eq!(matches("(write|run)_.*", "replace"), None);
    }
}
