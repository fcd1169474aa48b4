//! Text put into markup as entities, so that nothing an agent or a browser wrote is read as
//! a tag, an attribute or a link.

/// `&`, `<` and `>` as entities: text between tags shows as written. Enough for the markup
/// of Slack (`mrkdwn`) and Telegram, which read no quotes.
pub fn escape_text(s: &str) -> String {
    entities(s, false)
}

/// Text for HTML, in an element or an attribute: `&`, `<`, `>`, `"` and `'` as entities.
pub fn escape(s: &str) -> String {
    entities(s, true)
}

fn entities(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\'' if quotes => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
