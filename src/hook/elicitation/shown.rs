//! What the person is shown of an MCP server's question, as it will act: a URL as the browser
//! would open it, with the site it opens set apart, and every label under the same
//! visibility rules as a command (render/visible.rs). A server wrote all of it, and the
//! person decides on what they read.

use serde_json::{Map, Value};
use url::Url;

use crate::render::approval::fenced;
use crate::render::visible::{Lines, clip, has_hidden, visible};

/// The most of a URL shown; the rest is cut with a note saying how much (the site it opens
/// is shown apart, above it, whatever its length).
const MAX_URL_SHOWN: usize = 2_000;

/// The server's page, read as the browser reads it: an absolute http or https URL with a
/// host. `Err` says why it cannot be offered.
pub fn page_url(raw: &str) -> Result<Url, String> {
    let url =
        Url::parse(raw.trim()).map_err(|e| format!("the MCP server's url is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "the MCP server's url must be an http or https address, got {:?}",
            visible(&raw.chars().take(100).collect::<String>(), Lines::Marked)
        ));
    }
    Ok(url)
}

/// The site `url` opens: its host (an international one in its ASCII form, so a look-alike
/// letter shows as what it is), with its port when it names one.
pub fn site(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// Whether `url` has a part before `@` (a user name, a password): what makes
/// `https://accounts.google.com@evil.example/` look like a Google address.
pub fn has_userinfo(url: &Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// The page section of the question (Markdown): the site set apart, a warning for a part
/// before `@`, and the address as it will be opened, cut with a note past
/// [`MAX_URL_SHOWN`] characters.
pub fn page_section(url: &Url) -> String {
    let site = site(url);
    let mut out = format!(
        "It asks you to open a page. The site your browser would open:\n\n{}",
        fenced("text", &visible(&site, Lines::Marked))
    );
    if has_userinfo(url) {
        let before: String = url.as_str()[url.scheme().len() + 3..]
            .split('@')
            .next()
            .unwrap_or_default()
            .to_string();
        out.push_str(&format!(
            "**Careful: the part before @ is not the site.** The address starts with {}, but \
             that is a user name your browser would send to {}; it is often written to look \
             like another site.\n\n",
            inline(&clip(&before, 200, Lines::Marked).with_note()),
            inline(&site),
        ));
    }
    out.push_str(&format!(
        "The full address, as your browser would open it. Check it before you open it: sayso \
         does not open it for you.\n\n{}",
        fenced(
            "text",
            &clip(url.as_str(), MAX_URL_SHOWN, Lines::Marked).with_note()
        )
    ));
    out
}

/// `s` as inline code, fenced with more backticks than it holds in a row.
fn inline(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {s} {fence}")
}

/// The form's labels made visible in place (titles, descriptions, the names of choices);
/// what its answer holds (a field's name, a choice's value) is never rewritten, so one with a
/// hidden character cannot be shown faithfully and is refused.
pub fn visible_labels(form: &mut Value) -> Result<(), String> {
    let Some(Value::Object(properties)) = form.get_mut("properties") else {
        return Ok(());
    };
    for (name, property) in properties.iter_mut() {
        let path = format!(
            "requested_schema.properties.{}",
            visible(name, Lines::Marked)
        );
        if has_hidden(name) {
            return Err(hidden_value(&path, name));
        }
        let Value::Object(p) = property else {
            continue;
        };
        labels(p, &path)?;
        if let Some(Value::Object(items)) = p.get_mut("items") {
            labels(items, &format!("{path}.items"))?;
        }
    }
    Ok(())
}

/// One property's (or its items') labels made visible, and its values checked.
fn labels(p: &mut Map<String, Value>, path: &str) -> Result<(), String> {
    mark(p.get_mut("title"), Lines::Marked);
    mark(p.get_mut("description"), Lines::Kept);
    if let Some(Value::Array(names)) = p.get_mut("enumNames") {
        names.iter_mut().for_each(|n| mark(Some(n), Lines::Marked));
    }
    for values in ["enum"] {
        for v in p
            .get(values)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(s) = v.as_str().filter(|s| has_hidden(s)) {
                return Err(hidden_value(&format!("{path}.{values}"), s));
            }
        }
    }
    for choices in ["oneOf", "anyOf"] {
        for c in p
            .get_mut(choices)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(s) = c["const"].as_str().filter(|s| has_hidden(s)) {
                return Err(hidden_value(&format!("{path}.{choices}"), s));
            }
            mark(c.get_mut("title"), Lines::Marked);
        }
    }
    Ok(())
}

fn mark(text: Option<&mut Value>, lines: Lines) {
    if let Some(v) = text
        && let Some(s) = v.as_str()
    {
        *v = Value::from(visible(s, lines));
    }
}

fn hidden_value(path: &str, value: &str) -> String {
    format!(
        "{path} holds {:?}, with characters that draw nothing or turn text around: an answer \
         to it cannot be shown as it is sent",
        visible(&value.chars().take(100).collect::<String>(), Lines::Marked)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_site_is_shown_apart_as_the_browser_reads_it() {
        let url = page_url("https://accounts.google.com@evil.example/login?next=/").unwrap();
        assert_eq!(site(&url), "evil.example");
        assert!(has_userinfo(&url));
        let shown = page_section(&url);
        assert!(shown.contains("```text\nevil.example\n```"), "{shown}");
        assert!(
            shown.contains("the part before @ is not the site")
                && shown.contains("` accounts.google.com `")
                && shown.contains("send to ` evil.example `"),
            "{shown}"
        );
        // A password too, and a port: both part of what is shown.
        let url = page_url("http://user:pw@10.0.0.1:8443/x").unwrap();
        assert_eq!(site(&url), "10.0.0.1:8443");
        assert!(has_userinfo(&url));
        // An international host in its ASCII form; no part before @, no warning.
        let url = page_url("https://bücher.example/a b").unwrap();
        assert_eq!(site(&url), "xn--bcher-kva.example");
        assert!(!has_userinfo(&url));
        let shown = page_section(&url);
        assert!(!shown.contains("before @"), "{shown}");
        assert!(
            shown.contains("```text\nhttps://xn--bcher-kva.example/a%20b\n```"),
            "{shown}"
        );
    }

    #[test]
    fn a_long_address_is_cut_with_a_note_and_its_site_kept() {
        let long = format!(
            "https://{}@evil.example/{}",
            "a".repeat(9_000),
            "p".repeat(9_000)
        );
        let url = page_url(&long).unwrap();
        let shown = page_section(&url);
        assert!(shown.contains("```text\nevil.example\n```"), "{shown}");
        let left_out = url.as_str().chars().count() - MAX_URL_SHOWN;
        let note = crate::render::visible::cut_note(left_out);
        assert!(shown.contains(&format!("… {note}\n```")), "{note}");
        assert_eq!(left_out, 18_022 - 2_000);
        // The user name shown in the warning is cut too, and says so.
        assert!(shown.contains("[cut: 8,800 more characters]"), "{shown}");
        assert!(shown.chars().count() < 3_000);
    }

    #[test]
    fn what_is_not_a_web_page_is_refused() {
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "/relative",
            "data:,x",
        ] {
            let why = page_url(bad).unwrap_err();
            assert!(why.contains("url"), "{bad}: {why}");
        }
        let why = page_url("mailto:\u{202E}a@b.c").unwrap_err();
        assert!(why.contains("⟨U+202E⟩"), "{why}");
    }

    #[test]
    fn labels_show_hidden_characters_as_code_points() {
        let mut form = json!({"type": "object", "properties": {
            "plan": {"type": "string", "title": "Plan\u{202E}", "description": "a\u{200B}b\nc",
                     "enum": ["a", "b"], "enumNames": ["Tier\u{200B} A", "B"]},
            "tier": {"type": "string", "oneOf": [{"const": "x", "title": "X\u{202E}"}]},
            "teams": {"type": "array", "items": {"anyOf": [{"const": "ops", "title": "O\u{2066}"}]}}
        }});
        visible_labels(&mut form).unwrap();
        let p = &form["properties"];
        assert_eq!(p["plan"]["title"], "Plan⟨U+202E⟩");
        assert_eq!(p["plan"]["description"], "a⟨U+200B⟩b\nc");
        assert_eq!(p["plan"]["enumNames"], json!(["Tier⟨U+200B⟩ A", "B"]));
        assert_eq!(p["plan"]["enum"], json!(["a", "b"]));
        assert_eq!(
            p["tier"]["oneOf"][0],
            json!({"const": "x", "title": "X⟨U+202E⟩"})
        );
        assert_eq!(p["teams"]["items"]["anyOf"][0]["title"], "O⟨U+2066⟩");

        // What the answer holds is never rewritten: such a form is refused, saying where.
        for (form, at) in [
            (
                json!({"properties": {"a\u{200B}": {"type": "string"}}}),
                "properties.a⟨U+200B⟩",
            ),
            (
                json!({"properties": {"p": {"type": "string", "enum": ["x\u{202E}"]}}}),
                "p.enum",
            ),
            (
                json!({"properties": {"p": {"type": "string", "oneOf": [{"const": "\u{200B}"}]}}}),
                "p.oneOf",
            ),
        ] {
            let why = visible_labels(&mut form.clone()).unwrap_err();
            assert!(why.contains(at) && why.contains("draw nothing"), "{why}");
        }
    }
}
