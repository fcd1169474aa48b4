//! The asker's Markdown context in Telegram's HTML: emphasis, code and lists as Telegram shows
//! them, everything else as plain text, all of it escaped. A link shows where it goes,
//! `text (https://…)`, so its words cannot pass for another address; raw HTML in the
//! Markdown is shown as the text it is, never as markup.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// `md` as Telegram HTML.
pub fn to_html(md: &str) -> String {
    let mut out = String::new();
    // The link being written: its address, shown after its text unless they are the same.
    let mut links: Vec<(String, usize)> = Vec::new();
    let mut lists: Vec<Option<u64>> = Vec::new();
    for event in Parser::new_ext(md, Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph => {}
                Tag::Heading { level, .. } => out.push_str(if level <= HeadingLevel::H2 {
                    "<b><u>"
                } else {
                    "<b>"
                }),
                Tag::BlockQuote(_) => out.push_str("<blockquote>"),
                Tag::CodeBlock(kind) => {
                    let lang = match kind {
                        CodeBlockKind::Fenced(l) if !l.is_empty() => l.to_string(),
                        _ => String::new(),
                    };
                    if lang.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                        && !lang.is_empty()
                    {
                        out.push_str(&format!("<pre><code class=\"language-{lang}\">"));
                    } else {
                        out.push_str("<pre><code>");
                    }
                }
                Tag::List(start) => lists.push(start),
                Tag::Item => {
                    let depth = lists.len().saturating_sub(1);
                    out.push_str(&"  ".repeat(depth));
                    match lists.last_mut() {
                        Some(Some(n)) => {
                            out.push_str(&format!("{n}. "));
                            *n += 1;
                        }
                        _ => out.push_str("• "),
                    }
                }
                Tag::Emphasis => out.push_str("<i>"),
                Tag::Strong => out.push_str("<b>"),
                Tag::Strikethrough => out.push_str("<s>"),
                Tag::Link { dest_url, .. } => links.push((dest_url.to_string(), out.len())),
                Tag::Image { dest_url, .. } => {
                    out.push_str("[image");
                    links.push((dest_url.to_string(), out.len()));
                }
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph => out.push_str("\n\n"),
                TagEnd::Heading(level) => out.push_str(if level <= HeadingLevel::H2 {
                    "</u></b>\n\n"
                } else {
                    "</b>\n\n"
                }),
                TagEnd::BlockQuote(_) => {
                    trim_end(&mut out);
                    out.push_str("</blockquote>\n\n");
                }
                TagEnd::CodeBlock => {
                    trim_end(&mut out);
                    out.push_str("</code></pre>\n\n");
                }
                TagEnd::List(_) => {
                    lists.pop();
                    if lists.is_empty() {
                        out.push('\n');
                    }
                }
                TagEnd::Item => {
                    trim_end(&mut out);
                    out.push('\n');
                }
                TagEnd::Emphasis => out.push_str("</i>"),
                TagEnd::Strong => out.push_str("</b>"),
                TagEnd::Strikethrough => out.push_str("</s>"),
                TagEnd::Link | TagEnd::Image => {
                    if let Some((url, at)) = links.pop() {
                        let text = out[at..].to_string();
                        if text != escape(&url) {
                            out.push_str(&format!(" ({})", escape(&url)));
                        }
                    }
                    if matches!(tag, TagEnd::Image) {
                        out.push(']');
                    }
                }
                _ => {}
            },
            Event::Text(t) => out.push_str(&escape(&t)),
            Event::Code(c) => out.push_str(&format!("<code>{}</code>", escape(&c))),
            Event::Html(h) | Event::InlineHtml(h) => out.push_str(&escape(&h)),
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            Event::Rule => out.push_str("——————\n\n"),
            Event::TaskListMarker(done) => out.push_str(if done { "☑ " } else { "☐ " }),
            _ => {}
        }
    }
    trim_end(&mut out);
    out
}

fn trim_end(s: &mut String) {
    let kept = s.trim_end().len();
    s.truncate(kept);
}

/// Text for Telegram's HTML: `&`, `<` and `>` as entities, so nothing the asker wrote is
/// markup.
pub use crate::render::html::escape_text as escape;

/// Text for an HTML attribute's double quotes.
pub fn escape_attr(s: &str) -> String {
    escape(s).replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emphasis_code_and_lists_become_telegram_html() {
        let html = to_html("**Deploy** the *new* `api`:\n\n- one\n- two\n\n```sh\nmake <all>\n```");
        assert_eq!(
            html,
            "<b>Deploy</b> the <i>new</i> <code>api</code>:\n\n• one\n• two\n\n\
             <pre><code class=\"language-sh\">make &lt;all&gt;</code></pre>"
        );
    }

    #[test]
    fn a_link_shows_where_it_goes_and_html_stays_text() {
        assert_eq!(
            to_html("[the docs](https://evil.example/x) and <b>raw</b> <script>x</script>"),
            "the docs (https://evil.example/x) and &lt;b&gt;raw&lt;/b&gt; \
             &lt;script&gt;x&lt;/script&gt;"
        );
        assert_eq!(to_html("<https://a.example>"), "https://a.example");
        assert_eq!(
            to_html("```\n\"><a href=x>\n```"),
            "<pre><code>\"&gt;&lt;a href=x&gt;</code></pre>"
        );
        // A fence's language that is not a plain word is dropped, not written into the tag.
        assert_eq!(to_html("```\"><b>\nx\n```"), "<pre><code>x</code></pre>");
    }
}
