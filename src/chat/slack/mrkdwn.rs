//! Text for Slack's `mrkdwn`: agents' words escaped so that nothing in them is read as markup,
//! and a decision's Markdown context turned into the few formats Slack has.
//!
//! Slack reads `<…>` as a link or a mention (`<!channel>`, `<@U123>`, `<https://x|Allow>`)
//! and `&…;` as an entity; its documented rule is to escape `&`, `<` and `>` in any text that
//! is not meant as such. Everything an agent wrote goes through `escape`, so no mention,
//! broadcast or disguised link can be smuggled into a message; a Markdown link is shown as
//! its text followed by the address it really goes to. Messages are also posted with
//! `link_names: false`, so a bare `@channel` stays words.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// `&`, `<` and `>` as Slack's entities, so that the text shows as written.
pub use crate::render::html::escape_text as escape;

/// A Markdown source (a decision's context) as Slack mrkdwn: bold, italics, strike, code,
/// code blocks, lists, quotes and headings kept in Slack's forms; links as "text (address)";
/// raw HTML shown as text. Everything the agent wrote is escaped.
pub fn markdown_to_mrkdwn(source: &str) -> String {
    let parser = Parser::new_ext(
        source,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    );
    let mut w = Writer::default();
    for event in parser {
        w.event(event);
    }
    w.finish()
}

/// Builds mrkdwn line by line, so that quotes and list items can prefix each line.
#[derive(Default)]
struct Writer {
    out: String,
    /// Nothing but a prefix written on the current line yet.
    at_line_start: bool,
    quote_depth: usize,
    /// One entry per open list: the next number of an ordered list, None for bullets.
    lists: Vec<Option<u64>>,
    /// The text of the link being read, and where it goes.
    link: Option<(String, String)>,
    /// An image's alt text being read.
    image: Option<String>,
    /// Inside a table cell that is not the row's first.
    cell_index: usize,
}

impl Writer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                // mrkdwn has no way to escape a backtick inside code: such code is plain text.
                if code.contains('`') || code.contains('\n') {
                    self.text(&code);
                } else {
                    self.raw(&format!("`{}`", escape(&code)));
                }
            }
            Event::Html(raw) | Event::InlineHtml(raw) => self.text(&raw),
            Event::SoftBreak | Event::HardBreak => self.newline(),
            Event::Rule => {
                self.block_break();
                self.raw("――――――――");
                self.newline();
            }
            Event::TaskListMarker(done) => self.raw(if done { "☑ " } else { "☐ " }),
            Event::FootnoteReference(name) => self.text(&format!("[{name}]")),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_break(),
            Tag::Heading { level, .. } => {
                self.block_break();
                // Slack has no headings: a bold line, the top ones a little louder.
                if matches!(level, HeadingLevel::H1 | HeadingLevel::H2) {
                    self.raw("*");
                } else {
                    self.raw("_");
                }
            }
            Tag::BlockQuote(_) => {
                self.block_break();
                self.quote_depth += 1;
            }
            // A fenced block's language has no place in Slack's code blocks.
            Tag::CodeBlock(_) => {
                self.block_break();
                self.raw("```");
                self.newline();
            }
            Tag::List(first) => {
                if self.lists.is_empty() {
                    self.block_break();
                } else if !self.at_line_start {
                    self.newline();
                }
                self.lists.push(first);
            }
            Tag::Item => {
                if !self.at_line_start {
                    self.newline();
                }
                self.line_prefix();
                let depth = self.lists.len().saturating_sub(1);
                self.out.push_str(&"    ".repeat(depth));
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.out.push_str(&marker);
                self.at_line_start = false;
            }
            Tag::Emphasis => self.raw("_"),
            Tag::Strong => self.raw("*"),
            Tag::Strikethrough => self.raw("~"),
            Tag::Link { dest_url, .. } => self.link = Some((String::new(), dest_url.to_string())),
            // An image is never fetched: its alt text is shown.
            Tag::Image { .. } => self.image = Some(String::new()),
            Tag::Table(_) => self.block_break(),
            Tag::TableHead | Tag::TableRow => {
                if !self.at_line_start {
                    self.newline();
                }
                self.cell_index = 0;
            }
            Tag::TableCell => {
                if self.cell_index > 0 {
                    self.raw(" | ");
                }
                self.cell_index += 1;
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.newline(),
            TagEnd::Heading(level) => {
                self.raw(if matches!(level, HeadingLevel::H1 | HeadingLevel::H2) {
                    "*"
                } else {
                    "_"
                });
                self.newline();
            }
            TagEnd::BlockQuote(_) => self.quote_depth = self.quote_depth.saturating_sub(1),
            TagEnd::CodeBlock => {
                if !self.at_line_start {
                    self.newline();
                }
                self.raw("```");
                self.newline();
            }
            TagEnd::List(_) => {
                self.lists.pop();
                if !self.at_line_start {
                    self.newline();
                }
            }
            TagEnd::Emphasis => self.raw("_"),
            TagEnd::Strong => self.raw("*"),
            TagEnd::Strikethrough => self.raw("~"),
            TagEnd::Link => {
                if let Some((text, url)) = self.link.take() {
                    // The address is shown as it is, never hidden behind words.
                    let shown = if text.is_empty() || text == escape(&url) {
                        escape(&url)
                    } else {
                        format!("{text} ({})", escape(&url))
                    };
                    self.raw(&shown);
                }
            }
            TagEnd::Image => {
                if let Some(alt) = self.image.take() {
                    self.raw(&format!("[image: {alt}]"));
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => self.newline(),
            _ => {}
        }
    }

    /// Text the agent wrote: escaped.
    fn text(&mut self, text: &str) {
        let escaped = escape(text);
        if let Some(alt) = self.image.as_mut() {
            alt.push_str(&escaped);
            return;
        }
        if let Some((link_text, _)) = self.link.as_mut() {
            link_text.push_str(&escaped);
            return;
        }
        // A code block's lines keep their own breaks; each gets the quote's prefix.
        let mut lines = escaped.split('\n').peekable();
        while let Some(line) = lines.next() {
            if !line.is_empty() {
                self.raw(line);
            }
            if lines.peek().is_some() {
                self.newline();
            }
        }
    }

    /// Markup of ours (or text already escaped), written at the current place.
    fn raw(&mut self, s: &str) {
        if let Some((link_text, _)) = self.link.as_mut() {
            link_text.push_str(s);
            return;
        }
        if s.is_empty() {
            return;
        }
        if self.at_line_start || self.out.is_empty() {
            self.line_prefix();
        }
        self.out.push_str(s);
        self.at_line_start = false;
    }

    fn line_prefix(&mut self) {
        if self.at_line_start || self.out.is_empty() {
            for _ in 0..self.quote_depth {
                self.out.push_str("> ");
            }
        }
        self.at_line_start = false;
    }

    fn newline(&mut self) {
        if self.link.is_some() {
            self.raw(" ");
            return;
        }
        self.out.push('\n');
        self.at_line_start = true;
    }

    /// A blank line before a new block, unless at the very start.
    fn block_break(&mut self) {
        if self.out.is_empty() || !self.lists.is_empty() {
            return;
        }
        if !self.at_line_start {
            self.newline();
        }
        if !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
        self.at_line_start = true;
    }

    fn finish(self) -> String {
        self.out.trim_end().to_string()
    }
}

/// The note that ends a text cut to fit.
pub const CUT_NOTE: &str = "… (the rest is on the page)";

/// Splits mrkdwn into pieces of at most `max` characters each, and at most `pieces` of them,
/// at line ends where it can, never inside an entity (`&amp;`), and closing and reopening a
/// code block that a cut falls in. What does not fit ends with `CUT_NOTE`.
pub fn split(text: &str, max: usize, pieces: usize) -> Vec<String> {
    let max = max.max(CUT_NOTE.chars().count() + 16);
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut current_len = 0usize;
    let mut in_fence = false;
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.is_empty() {
        lines.clear();
    }
    // Room kept in each piece for closing a code block ("\n```") and reopening one.
    const FENCE: usize = 4;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let line_len = line.chars().count() + usize::from(current_len > 0);
        let room = max - FENCE;
        if current_len + line_len <= room {
            if current_len > 0 {
                current.push('\n');
            }
            current.push_str(line);
            current_len += line_len;
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
            }
            i += 1;
            continue;
        }
        // The line does not fit: end this piece. A line that fits no piece is cut, so that
        // each piece moves on.
        let fresh = if in_fence { 3 } else { 0 };
        if current_len == fresh {
            let (head, tail) = cut_at(line, room - current_len - 1);
            if fresh > 0 {
                current.push('\n');
            }
            current.push_str(head);
            lines[i] = tail;
        }
        if in_fence {
            current.push_str("\n```");
        }
        out.push(std::mem::take(&mut current));
        current_len = 0;
        if out.len() == pieces {
            let last = out.last_mut().expect("a piece was just pushed");
            cut_for_note(last, max);
            return out;
        }
        if in_fence {
            current.push_str("```");
            current_len = 3;
        }
    }
    if current_len > 0 && current != "```" {
        out.push(current);
    }
    out
}

/// Ends a piece with `CUT_NOTE`, cutting it so that both fit in `max`.
fn cut_for_note(piece: &mut String, max: usize) {
    let note = CUT_NOTE.chars().count() + 1;
    let fenced = piece.ends_with("\n```");
    let body_max = max - note - if fenced { 4 } else { 0 };
    let body = if fenced {
        &piece[..piece.len() - 4]
    } else {
        &piece[..]
    };
    let (head, _) = cut_at(body, body_max);
    let mut s = head.to_string();
    if fenced {
        s.push_str("\n```");
    }
    s.push('\n');
    s.push_str(CUT_NOTE);
    *piece = s;
}

/// The first at most `max` characters of `s`, not ending inside an `&…;` entity, and the rest.
pub fn cut_at(s: &str, max: usize) -> (&str, &str) {
    let end = s.char_indices().nth(max).map_or(s.len(), |(i, _)| i);
    let mut end = end;
    if end < s.len()
        && let Some(amp) = s[..end].rfind('&')
        && !s[amp..end].contains(';')
        && s[amp..].find(';').is_some_and(|semi| semi <= 5)
    {
        end = amp;
    }
    s.split_at(end)
}

/// `s` in at most `max` characters, ending with "…" when cut (plain text: button labels,
/// modal titles, fallbacks).
pub fn clip_plain(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_broadcasts_and_disguised_links_are_escaped() {
        let evil = "<!channel> <!here|here> <@U012AB3CD> <https://evil.example|Allow> & &amp;";
        let out = escape(evil);
        assert_eq!(
            out,
            "&lt;!channel&gt; &lt;!here|here&gt; &lt;@U012AB3CD&gt; \
             &lt;https://evil.example|Allow&gt; &amp; &amp;amp;"
        );
        assert!(!out.contains('<') && !out.contains('>'));
        // The same through the Markdown path, raw HTML included.
        let md = markdown_to_mrkdwn(&format!("{evil}\n\n<b>x</b> <script>y</script>"));
        assert!(!md.contains('<') && !md.contains('>'), "{md}");
    }

    #[test]
    fn a_link_shows_where_it_really_goes() {
        let md = markdown_to_mrkdwn(
            "See [the report](https://ci.example/run/7) or <https://a.example>.",
        );
        assert_eq!(
            md,
            "See the report (https://ci.example/run/7) or https://a.example."
        );
        // A link whose words look like another address shows both.
        let md = markdown_to_mrkdwn("[https://bank.example](https://evil.example)");
        assert_eq!(md, "https://bank.example (https://evil.example)");
        // Slack's own link syntax inside a Markdown link's text stays text.
        let md = markdown_to_mrkdwn("[<https://evil.example|x>](https://a.example)");
        assert!(!md.contains('<'), "{md}");
    }

    #[test]
    fn markdown_formats_become_slack_formats() {
        let md = markdown_to_mrkdwn(
            "# Deploy\n\n**Bold** and *it* and ~~gone~~ and `v1.2`.\n\n- one\n- two\n  1. sub\n\n> quoted\n> more\n\n```sh\nrm -rf /tmp/x && echo <ok>\n```",
        );
        assert_eq!(
            md,
            "*Deploy*\n\n*Bold* and _it_ and ~gone~ and `v1.2`.\n\n• one\n• two\n    1. sub\n\n\
             > quoted\n> more\n\n```\nrm -rf /tmp/x &amp;&amp; echo &lt;ok&gt;\n```"
        );
    }

    #[test]
    fn code_with_a_backtick_is_plain_text() {
        assert_eq!(markdown_to_mrkdwn("`` a`b ``"), "a`b");
    }

    #[test]
    fn split_keeps_short_text_whole() {
        assert_eq!(split("a\nb", 3000, 3), vec!["a\nb".to_string()]);
        assert!(split("", 3000, 3).is_empty());
    }

    #[test]
    fn split_cuts_at_lines_and_notes_the_rest() {
        let text = (0..200)
            .map(|i| format!("line {i} {}", "x".repeat(40)))
            .collect::<Vec<_>>()
            .join("\n");
        let pieces = split(&text, 3000, 2);
        assert_eq!(pieces.len(), 2);
        for p in &pieces {
            assert!(p.chars().count() <= 3000, "{}", p.chars().count());
        }
        assert!(pieces[0].ends_with('x'));
        assert!(pieces[1].ends_with(CUT_NOTE));
        // Everything not cut is there, in order.
        assert!(pieces[0].starts_with("line 0 "));
        let second_first = pieces[1].lines().next().unwrap();
        let first_last = pieces[0].lines().last().unwrap();
        let n = |l: &str| l.split(' ').nth(1).unwrap().parse::<u32>().unwrap();
        assert_eq!(n(second_first), n(first_last) + 1);
    }

    #[test]
    fn split_closes_and_reopens_a_code_block() {
        let text = format!("```\n{}\n```", vec!["y".repeat(50); 100].join("\n"));
        let pieces = split(&text, 3000, 5);
        assert!(pieces.len() >= 2);
        for p in &pieces {
            assert!(p.chars().count() <= 3000);
            assert!(p.starts_with("```"), "{p:.20}");
            assert!(p.ends_with("```"), "{:?}", &p[p.len() - 10..]);
        }
    }

    #[test]
    fn a_cut_never_splits_an_entity() {
        let line = format!("{}&amp;tail", "a".repeat(2990));
        let pieces = split(&line, 3000, 1);
        assert_eq!(pieces.len(), 1);
        assert!(!pieces[0].contains("&am\n") && !pieces[0].contains("&a…"));
        let (head, tail) = cut_at("ab&amp;cd", 4);
        assert_eq!((head, tail), ("ab", "&amp;cd"));
        let (head, _) = cut_at("ab&amp;cd", 7);
        assert_eq!(head, "ab&amp;");
    }

    #[test]
    fn plain_text_is_clipped_with_an_ellipsis() {
        assert_eq!(clip_plain("Allow", 75), "Allow");
        let long = "é".repeat(80);
        let clipped = clip_plain(&long, 75);
        assert_eq!(clipped.chars().count(), 75);
        assert!(clipped.ends_with('…'));
    }
}
