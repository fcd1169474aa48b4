//! What a person's edit changed in a command, word by word: the approval page shows it
//! before they allow (as they type) and once allowed, so that what runs is never a surprise
//! to the person who wrote it. Pure, and bounded: a diff too large to work out word by word
//! is shown as the whole command removed and the whole edit added.

use super::visible::{Lines, visible};

/// One piece of the diff: kept, removed (only in what the agent asked) or added (only in
/// the edit). Its text is made visible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// `""` (kept), `"del"` or `"add"`: the class the page gives it.
    pub class: &'static str,
    pub text: String,
}

/// The most word pairs compared; beyond, the diff is whole command against whole edit.
const MAX_CELLS: usize = 4_000_000;

/// The word diff of `asked` against `edited`, in order; removed pieces come before the
/// added ones that replace them.
pub fn word_diff(asked: &str, edited: &str) -> Vec<Piece> {
    let a = words(asked);
    let b = words(edited);
    let mut out: Vec<Piece> = Vec::new();
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        push(&mut out, "del", asked);
        push(&mut out, "add", edited);
        return out;
    }
    // Longest common subsequence, filled from the end so that the walk goes forwards.
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            push(&mut out, "", a[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            push(&mut out, "del", a[i]);
            i += 1;
        } else {
            push(&mut out, "add", b[j]);
            j += 1;
        }
    }
    out
}

/// Whether the diff changes anything.
pub fn changes(diff: &[Piece]) -> bool {
    diff.iter().any(|p| !p.class.is_empty())
}

/// The command split into words and the runs of spaces between them (kept, so that the
/// pieces joined give the command back).
fn words(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut space = None;
    for (i, c) in s.char_indices() {
        let is_space = c.is_whitespace();
        if space.is_some_and(|was| was != is_space) {
            out.push(&s[start..i]);
            start = i;
        }
        space = Some(is_space);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

fn push(out: &mut Vec<Piece>, class: &'static str, text: &str) {
    if text.is_empty() {
        return;
    }
    let text = visible(text, Lines::Kept);
    match out.last_mut() {
        Some(last) if last.class == class => last.text.push_str(&text),
        _ => out.push(Piece { class, text }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(diff: &[Piece]) -> String {
        diff.iter()
            .map(|p| match p.class {
                "del" => format!("[-{}]", p.text),
                "add" => format!("[+{}]", p.text),
                _ => p.text.clone(),
            })
            .collect()
    }

    #[test]
    fn a_changed_word_is_removed_then_added() {
        let d = word_diff("rm -rf build/", "rm -rf build/cache");
        assert_eq!(shown(&d), "rm -rf [-build/][+build/cache]");
        assert!(changes(&d));
        let d = word_diff("git push origin main", "git push --force origin main");
        assert_eq!(shown(&d), "git push [+--force ]origin main");
    }

    #[test]
    fn the_same_command_changes_nothing_and_hidden_characters_show() {
        assert!(!changes(&word_diff("ls -la", "ls -la")));
        let d = word_diff("ls", "ls\u{202E}x");
        assert_eq!(shown(&d), "[-ls][+ls⟨U+202E⟩x]");
    }

    #[test]
    fn a_huge_edit_is_whole_against_whole() {
        let asked = "a ".repeat(3000);
        let edited = "b ".repeat(3000);
        let d = word_diff(&asked, &edited);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].class, d[1].class), ("del", "add"));
    }
}
