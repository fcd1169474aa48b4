//! Markdown from agents (context, option previews) rendered for a page: raw HTML in the
//! source is shown as text, and the result is cleaned by ammonia, so no script, event
//! handler, `javascript:` URL or remote image ever reaches the page.

use std::collections::HashSet;
use std::sync::OnceLock;

use pulldown_cmark::{Event, Options, Parser, html};

/// Renders Markdown to sanitised HTML, safe to insert into a page unescaped.
pub fn render_markdown(source: &str) -> String {
    let parser = Parser::new_ext(
        source,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    )
    .map(|event| match event {
        // Agents' HTML is shown as they wrote it, never interpreted.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut out = String::with_capacity(source.len() * 3 / 2);
    html::push_html(&mut out, parser);
    cleaner().clean(&out).to_string()
}

/// Renders an option's preview: Markdown, or an HTML fragment (a mock-up), shown as markup
/// once ammonia has removed anything that could run or load (scripts, styles, event
/// handlers, images, other URL schemes).
pub fn render_preview(source: &str) -> String {
    let parser = Parser::new_ext(
        source,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    );
    let mut out = String::with_capacity(source.len() * 3 / 2);
    html::push_html(&mut out, parser);
    cleaner().clean(&out).to_string()
}

fn cleaner() -> &'static ammonia::Builder<'static> {
    static CLEANER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    CLEANER.get_or_init(|| {
        let mut b = ammonia::Builder::default();
        // Images would be fetched from another host; the page carries none but its own.
        b.rm_tags(["img"]);
        b.url_schemes(HashSet::from(["http", "https", "mailto"]));
        b.link_rel(Some("noopener noreferrer nofollow"));
        b
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered() {
        let html = render_markdown("**Deploy** `v1.2`\n\n- a\n- b");
        assert!(html.contains("<strong>Deploy</strong>"));
        assert!(html.contains("<code>v1.2</code>"));
        assert!(html.contains("<li>a</li>"));
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = render_markdown("<script>alert(1)</script> and <b onclick=x>b</b>");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b "), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn dangerous_urls_and_images_are_removed() {
        for md in [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](data:text/html,<script>alert(1)</script>)",
            "![i](https://tracker.example/pixel.png)",
            "<svg onload=alert(1)>",
            "<img src=x onerror=alert(1)>",
            "<a href=\"javascript:alert(1)\">x</a>",
        ] {
            let html = render_markdown(md);
            let lower = html.to_lowercase();
            // Escaped text may still read `href="javascript:`; no tag may carry it.
            assert!(!lower.contains("<a href=\"javascript"), "{md} → {html}");
            assert!(!lower.contains("<img"), "{md} → {html}");
            assert!(!lower.contains("<svg"), "{md} → {html}");
            assert!(!lower.contains("<a href=\"data:"), "{md} → {html}");
        }
    }

    #[test]
    fn links_open_safely() {
        let html = render_markdown("[docs](https://example.com/docs)");
        assert!(html.contains("href=\"https://example.com/docs\""));
        assert!(html.contains("rel=\"noopener noreferrer nofollow\""));
    }
}
