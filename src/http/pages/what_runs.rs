//! What a tool call runs, laid out for the approval page and the session page alike: the
//! readable rendering of the call (the command, the diff, the file, the URL) and, beside it,
//! every other field of the input by its path (render/input_fields.rs). Every text is made
//! visible (render/visible.rs), and the whole is cut to one budget of characters: what is
//! left out is counted, and a page that cut anything offers no Allow until the whole of it
//! is opened.

use serde_json::Value;

use super::command;
use crate::domain::approval::{Action, ApprovalSpec, action_of, size_in_words};
use crate::domain::danger::dangers;
use crate::render::visible::{Lines, clip, visible};
use crate::render::what_runs::other_fields;

/// Most characters of a command, a written file, a diff or an input shown before the page
/// cuts it and asks the person to open the whole change.
pub const SHOWN_CHARS: usize = 20_000;

/// What the call does, ready for the template; every text in it is visible.
pub enum What {
    /// A shell command, split into pieces to colour: (class, text).
    Shell(Vec<(&'static str, String)>),
    /// A replacement in a file: the lines it adds, then those it removes.
    Edit {
        path: Option<String>,
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// A patch, one (class, line) per line.
    Diff(Vec<(&'static str, String)>),
    Write {
        path: String,
        size: String,
        content: String,
    },
    Fetch {
        host: String,
        url: String,
    },
    /// A tool without a readable rendering: its fields are all there is.
    Other,
}

impl What {
    /// A tool without a readable rendering.
    pub fn is_other(&self) -> bool {
        matches!(self, What::Other)
    }
}

/// One field of the input the readable rendering does not show, by its path.
pub struct FieldView {
    pub path: String,
    pub value: String,
    /// The value holds line breaks: shown as a block.
    pub block: bool,
}

/// What the page shows of a call.
pub struct Shown {
    pub what: What,
    /// The input's other fields; all of them for `What::Other`.
    pub fields: Vec<FieldView>,
    /// How many characters of what is shown were left out (0: all of it is on the page).
    pub left_out: usize,
}

/// What the call does and the input's other fields, each text made visible and the whole
/// cut to `max` characters of what is shown.
pub fn what(tool_name: &str, input: &Value, max: usize) -> Shown {
    let mut budget = Budget {
        left: max,
        left_out: 0,
    };
    let what = match action_of(tool_name, input) {
        Action::Shell { command } => {
            let shown = budget.take_original(command);
            // The danger marks are found on the whole command, then laid on what is shown.
            What::Shell(command::pieces(shown, &dangers(command)))
        }
        Action::Edit { path, old, new } => {
            let added = new.lines().map(|l| budget.take(l)).collect();
            let removed = old.lines().map(|l| budget.take(l)).collect();
            What::Edit {
                path: path.map(|p| visible(p, Lines::Marked)),
                added,
                removed,
            }
        }
        Action::Patch { patch } => What::Diff(
            patch
                .lines()
                .map(|l| (diff_class(l), budget.take(l)))
                .collect(),
        ),
        Action::Write { path, content } => What::Write {
            path: visible(path, Lines::Marked),
            size: size_in_words(content.len()),
            content: budget.take(content),
        },
        Action::Fetch { url } => What::Fetch {
            host: url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(|h| visible(h, Lines::Marked)))
                .unwrap_or_else(|| "(no host)".into()),
            url: budget.take(url),
        },
        Action::Other => What::Other,
    };
    let mut fields = Vec::new();
    for f in other_fields(tool_name, input) {
        let value = f.value.as_str();
        // Past the budget a field is only counted: thousands of them would make a page
        // nobody reads.
        if budget.left == 0 {
            budget.skip(&f.path, Lines::Marked);
            budget.skip(value, Lines::Kept);
            continue;
        }
        fields.push(FieldView {
            path: budget.take_as(&f.path, Lines::Marked),
            value: budget.take(value),
            block: value.contains('\n'),
        });
    }
    Shown {
        what,
        fields,
        left_out: budget.left_out,
    }
}

/// Whether the page of `a` cuts what runs, so that its Allow needs the whole change opened.
pub fn is_cut(a: &ApprovalSpec) -> bool {
    let input = Value::Object(a.tool_input.clone());
    what(&a.tool_name, &input, SHOWN_CHARS).left_out > 0
}

/// The characters a page may still show, shared by the parts of a change in order.
struct Budget {
    left: usize,
    left_out: usize,
}

impl Budget {
    /// `text` made visible, as much of it as the budget allows (line breaks and tabs kept).
    fn take(&mut self, text: &str) -> String {
        self.take_as(text, Lines::Kept)
    }

    fn take_as(&mut self, text: &str, lines: Lines) -> String {
        let c = clip(text, self.left, lines);
        self.left = self.left.saturating_sub(c.text.chars().count() + 1);
        self.left_out += c.left_out;
        c.text
    }

    /// `text` counted as left out, whole.
    fn skip(&mut self, text: &str, lines: Lines) {
        self.left_out += clip(text, 0, lines).left_out;
    }

    /// The part of `text` the budget allows, as it is (the caller makes it visible).
    fn take_original<'a>(&mut self, text: &'a str) -> &'a str {
        let c = clip(text, self.left, Lines::Kept);
        self.left = self.left.saturating_sub(c.text.chars().count() + 1);
        self.left_out += c.left_out;
        &text[..c.taken]
    }
}

fn diff_class(l: &str) -> &'static str {
    if l.starts_with("+++") || l.starts_with("---") {
        "file"
    } else if l.starts_with("@@") || l.starts_with("***") {
        "hunk"
    } else if l.starts_with('+') {
        "add"
    } else if l.starts_with('-') {
        "del"
    } else {
        "ctx"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_shows_what_it_adds_before_what_it_removes() {
        let input =
            json!({"file_path": "/a.rs", "old_string": "old 1\nold 2", "new_string": "new"});
        let s = what("Edit", &input, SHOWN_CHARS);
        assert_eq!(s.left_out, 0);
        let What::Edit { added, removed, .. } = s.what else {
            panic!("an edit")
        };
        assert_eq!(added, ["new"]);
        assert_eq!(removed, ["old 1", "old 2"]);
        assert!(s.fields.is_empty());
    }

    #[test]
    fn a_long_change_is_cut_and_counts_what_was_left_out() {
        let new = "x".repeat(30_000);
        let input = json!({"file_path": "/a.rs", "old_string": "y".repeat(100), "new_string": new});
        let s = what("Edit", &input, SHOWN_CHARS);
        assert_eq!(s.left_out, 30_000 - SHOWN_CHARS + 100);
        let What::Edit { added, removed, .. } = s.what else {
            panic!("an edit")
        };
        assert_eq!(added[0].len(), SHOWN_CHARS);
        assert_eq!(removed, [""]);
        assert_eq!(what("Edit", &input, usize::MAX).left_out, 0);
    }

    #[test]
    fn the_other_fields_are_shown_and_counted_in_the_cut() {
        let input = json!({"file_path": "/a", "old_string": "x", "new_string": "y",
            "host": "prod\u{200B}", "replace_all": true, "note": "a\nb"});
        let s = what("Edit", &input, SHOWN_CHARS);
        let fields: Vec<(&str, &str, bool)> = s
            .fields
            .iter()
            .map(|f| (f.path.as_str(), f.value.as_str(), f.block))
            .collect();
        assert_eq!(
            fields,
            [
                ("host", "prod⟨U+200B⟩", false),
                ("replace_all", "true", false),
                ("note", "a\nb", true)
            ]
        );
        // A field past the budget is cut like the rest of the change, and counted.
        let input = json!({"command": "ls", "padding": "p".repeat(SHOWN_CHARS),
            "executablePath": "/bin/sh"});
        let s = what("Bash", &input, SHOWN_CHARS);
        assert!(s.left_out > "executablePath/bin/sh".len(), "{}", s.left_out);
        assert!(s.fields.iter().all(|f| f.path != "executablePath"));
        let s = what("Bash", &input, usize::MAX);
        assert_eq!(s.left_out, 0);
        assert_eq!(s.fields[1].value, "/bin/sh");
    }

    #[test]
    fn a_tool_without_a_rendering_lists_every_field() {
        let input = json!({"sql": "select 1", "db": {"name": "prod"}});
        let s = what("mcp__db__query", &input, SHOWN_CHARS);
        assert!(matches!(s.what, What::Other));
        let paths: Vec<&str> = s.fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["sql", "db.name"]);
    }

    #[test]
    fn diff_lines_are_classed() {
        let classes: Vec<&str> = ["--- a", "+++ b", "@@ -1 +1 @@", "-x", "+y", " z"]
            .iter()
            .map(|l| diff_class(l))
            .collect();
        assert_eq!(classes, ["file", "file", "hunk", "del", "add", "ctx"]);
    }
}
