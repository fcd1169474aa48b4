//! An ask as a Matrix `m.room.message`: `body` in plain text and `formatted_body` in
//! `org.matrix.custom.html`, with everything the asker wrote escaped (no tag, link or mention
//! of theirs survives), what runs set apart in `<pre><code>`, and the answers as reactions:
//! Matrix has no buttons, so each of the ask's buttons becomes a reaction key (👍 / 👎,
//! 1️⃣ 2️⃣ …), and a reply to the message answers in words.
//!
//! Every message carries an empty `m.mentions`: whatever the asker wrote ("@room", someone's
//! id), it notifies no one but the person whose room it is.

use serde_json::{Value, json};

use super::super::{ChatAsk, ChatButton, Controls};
use crate::domain::chat::parse_button_value;

/// The reaction that stands for a button's code, if there is one.
pub fn reaction_key(code: &str) -> Option<String> {
    let key = match code {
        "y" | "a" | "done" => "👍",
        "n" | "d" | "skip" => "👎",
        _ => {
            let i: usize = code.strip_prefix('o')?.parse().ok()?;
            // Keycaps 1️⃣ … 9️⃣: the digit, VS16, the combining keycap.
            return (i < 9).then(|| format!("{}\u{fe0f}\u{20e3}", i + 1));
        }
    };
    Some(key.to_string())
}

/// A key as clients send it, reduced to compare: without variation selectors or skin tones
/// (one client sends "👍", another "👍🏽" or "1⃣").
pub fn normalize_key(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(*c, '\u{fe0e}' | '\u{fe0f}' | '\u{1f3fb}'..='\u{1f3ff}'))
        .collect()
}

/// The reactions the ask offers, each with the code it answers: `[("👍", "a"), …]`.
pub fn keys(ask: &ChatAsk) -> Vec<(String, String)> {
    let Controls::Buttons(buttons) = &ask.controls else {
        return Vec::new();
    };
    buttons
        .iter()
        .filter_map(|b| {
            let (_, code) = parse_button_value(&b.value)?;
            Some((reaction_key(&code)?, code))
        })
        .collect()
}

/// The content of an ask, or of its update: `footer` (the settled line, or the tally) takes
/// the place of the how-to-answer line when given; `controls` keeps that line as well (a tally
/// in progress).
pub fn content(ask: &ChatAsk, footer: Option<&str>, controls: bool) -> Value {
    let (body, html) = text(ask, footer, controls);
    json!({
        "msgtype": "m.text",
        "body": body,
        "format": "org.matrix.custom.html",
        "formatted_body": html,
        "m.mentions": {},
    })
}

/// An edit of `event` to `new` (`m.replace`): clients that know edits show `m.new_content`,
/// the others the starred fallback, in plain text only: the edit carries the message twice,
/// and a second HTML copy could take it past the 65536 bytes a Matrix event may have.
pub fn edit(event: &str, new: &Value) -> Value {
    json!({
        "msgtype": "m.text",
        "body": format!("* {}", new["body"].as_str().unwrap_or_default()),
        "m.new_content": new,
        "m.relates_to": {"rel_type": "m.replace", "event_id": event},
        "m.mentions": {},
    })
}

/// A short notice (`m.notice`, which bots send and clients show quieter), as a reply to
/// `event` when given; `link` is added as the page's link.
pub fn notice(text: &str, link: Option<&str>, reply_to: Option<&str>) -> Value {
    let mut body = text.to_string();
    let mut html = escape(text);
    if let Some(link) = link {
        body.push_str(&format!("\n{link}"));
        html.push_str(&format!(
            "<br><a href=\"{}\">Open the page</a>",
            escape(link)
        ));
    }
    let mut c = json!({
        "msgtype": "m.notice",
        "body": body,
        "format": "org.matrix.custom.html",
        "formatted_body": html,
        "m.mentions": {},
    });
    if let Some(event) = reply_to {
        c["m.relates_to"] = json!({"m.in_reply_to": {"event_id": event}});
    }
    c
}

/// The plain and the HTML text of an ask.
fn text(ask: &ChatAsk, footer: Option<&str>, controls: bool) -> (String, String) {
    let mut plain = ask.title.clone();
    let mut html = format!("<p><strong>{}</strong>", escape(&ask.title));
    if let Some(h) = &ask.heading {
        plain.push_str(&format!(" · {h}"));
        html.push_str(&format!(" · <em>{}</em>", escape(h)));
    }
    html.push_str("</p>");
    plain.push_str(&format!("\n{}", ask.question));
    html.push_str(&format!("<p>{}</p>", lines(&ask.question)));
    if let Some(command) = &ask.command {
        // Exactly as the page shows it; inside <pre><code> nothing is markup once escaped.
        plain.push_str(&format!("\n\n{command}\n"));
        html.push_str(&format!("<pre><code>{}</code></pre>", escape(command)));
    }
    if let Some(context) = &ask.context {
        plain.push_str(&format!("\n\n{context}"));
        html.push_str(&format!("<blockquote>{}</blockquote>", lines(context)));
    }
    for note in &ask.notes {
        plain.push_str(&format!("\n{note}"));
        html.push_str(&format!("<p>{}</p>", lines(note)));
    }
    if let Some(f) = footer {
        plain.push_str(&format!("\n\n{f}"));
        html.push_str(&format!("<p><strong>{}</strong></p>", lines(f)));
    }
    if footer.is_none() || controls {
        let how = how_to_answer(ask);
        plain.push_str(&format!("\n\n{how}"));
        html.push_str(&format!("<p>{}</p>", lines(&how)));
    }
    plain.push_str(&format!("\nOpen the page: {}", ask.link));
    html.push_str(&format!(
        "<p><a href=\"{}\">Open the page</a></p>",
        escape(&ask.link)
    ));
    (plain, html)
}

/// How to answer from Matrix: which reactions, and what a reply may say.
fn how_to_answer(ask: &ChatAsk) -> String {
    match &ask.controls {
        Controls::Buttons(buttons) => {
            let offered: Vec<String> = buttons
                .iter()
                .filter_map(|b| Some(format!("{} {}", key_of(b)?, label(b))))
                .collect();
            let codes: Vec<String> = buttons
                .iter()
                .filter_map(|b| parse_button_value(&b.value).map(|(_, c)| c))
                .collect();
            // The words a reply is read by ("allow", "deny: …") are the same in every
            // language; only what is said around them changes.
            let reply = ask.t.tr(if codes.iter().any(|c| c == "d") {
                "chat-matrix-reply-approval"
            } else if codes.iter().any(|c| c.starts_with('o')) {
                "chat-matrix-reply-option"
            } else {
                "chat-matrix-reply-answer"
            });
            ask.t.tr2(
                "chat-matrix-react",
                "offered",
                offered.join(" · "),
                "reply",
                reply,
            )
        }
        Controls::Reply { placeholder } => match placeholder {
            Some(p) => ask.t.tr1("chat-matrix-reply-with-hint", "hint", p),
            None => ask.t.tr("chat-matrix-reply"),
        },
        Controls::Link => ask.t.tr("chat-matrix-on-the-page"),
    }
}

fn key_of(b: &ChatButton) -> Option<String> {
    let (_, code) = parse_button_value(&b.value)?;
    reaction_key(&code)
}

fn label(b: &ChatButton) -> String {
    if b.recommended {
        format!("{} (recommended)", b.label)
    } else {
        b.label.clone()
    }
}

/// Escaped text with its line breaks kept as `<br>`.
fn lines(s: &str) -> String {
    escape(s).replace('\n', "<br>")
}

/// Text for HTML, in an element or an attribute, so nothing the asker wrote is a tag, an
/// attribute or a link.
pub use crate::render::html::escape;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ButtonStyle;
    use crate::domain::chat::button_value;

    fn button(label: &str, code: &str, recommended: bool) -> ChatButton {
        ChatButton {
            label: label.into(),
            value: button_value(uuid::Uuid::nil(), code),
            style: ButtonStyle::Plain,
            recommended,
        }
    }

    fn ask(controls: Controls) -> ChatAsk {
        ChatAsk {
            title: "shop <b>".into(),
            heading: Some("Reminder".into()),
            question: "Deploy <a href=\"https://evil.example\">now</a> @room?".into(),
            context: Some("**bold** & <img src=x onerror=alert(1)>\nline two".into()),
            command: Some("rm -rf build/ </code></pre><a href='x'>".into()),
            notes: vec!["⚠ deletes files".into()],
            controls,
            link: "https://s.example/p/t\"x".into(),
            t: Default::default(),
        }
    }

    #[test]
    fn what_the_asker_wrote_is_never_markup() {
        let c = content(&ask(Controls::Link), None, true);
        let html = c["formatted_body"].as_str().unwrap();
        assert!(
            html.contains("Deploy &lt;a href=&quot;https://evil.example&quot;&gt;now&lt;/a&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;<br>line two"),
            "{html}"
        );
        assert!(
            html.contains(
                "<pre><code>rm -rf build/ &lt;/code&gt;&lt;/pre&gt;&lt;a href=&#39;x&#39;&gt;</code></pre>"
            ),
            "{html}"
        );
        // The one link is the page's, its quote escaped.
        assert_eq!(html.matches("<a ").count(), 1, "{html}");
        assert!(
            html.contains("href=\"https://s.example/p/t&quot;x\""),
            "{html}"
        );
        assert_eq!(c["m.mentions"], json!({}));
        assert_eq!(c["format"], "org.matrix.custom.html");
        let body = c["body"].as_str().unwrap();
        assert!(
            body.contains("rm -rf build/ </code></pre><a href='x'>"),
            "{body}"
        );
        assert!(
            body.ends_with("Open the page: https://s.example/p/t\"x"),
            "{body}"
        );
    }

    #[test]
    fn buttons_become_reactions_with_their_codes() {
        let approval = ask(Controls::Buttons(vec![
            button("Allow", "a", false),
            button("Deny", "d", false),
        ]));
        assert_eq!(
            keys(&approval),
            vec![
                ("👍".to_string(), "a".to_string()),
                ("👎".into(), "d".into())
            ]
        );
        let body = content(&approval, None, true)["body"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            body.contains("React 👍 Allow · 👎 Deny, or reply to this message: “allow”, or “deny: your reason”."),
            "{body}"
        );
        let choose = ask(Controls::Buttons(vec![
            button("Red", "o0", false),
            button("Blue", "o1", true),
        ]));
        assert_eq!(
            keys(&choose)[1],
            ("2\u{fe0f}\u{20e3}".to_string(), "o1".into())
        );
        let body = content(&choose, None, true)["body"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(body.contains("1️⃣ Red · 2️⃣ Blue (recommended)"), "{body}");
        assert!(keys(&ask(Controls::Reply { placeholder: None })).is_empty());
    }

    #[test]
    fn keys_compare_without_variation_selectors_or_skin_tones() {
        assert_eq!(normalize_key("👍🏽"), normalize_key("👍"));
        assert_eq!(normalize_key("1⃣"), normalize_key("1\u{fe0f}\u{20e3}"));
        assert_ne!(normalize_key("👎"), normalize_key("👍"));
    }

    #[test]
    fn a_settled_update_drops_the_how_to_a_tally_keeps_it() {
        let a = ask(Controls::Buttons(vec![button("Allow", "a", false)]));
        let settled = content(&a, Some("Allowed by ana from Matrix"), false);
        let body = settled["body"].as_str().unwrap();
        assert!(body.contains("Allowed by ana from Matrix"), "{body}");
        assert!(!body.contains("React"), "{body}");
        let tally = content(&a, Some("1 of 2 allowed: ana"), true);
        assert!(tally["body"].as_str().unwrap().contains("React 👍 Allow"));
        let e = edit("$ev", &settled);
        assert_eq!(
            e["m.relates_to"],
            json!({"rel_type": "m.replace", "event_id": "$ev"})
        );
        assert_eq!(e["m.new_content"], settled);
        assert!(e["body"].as_str().unwrap().starts_with("* shop <b>"));
    }

    #[test]
    fn a_notice_escapes_its_text_and_replies() {
        let n = notice("<b>not yours</b>", Some("https://s.example/x"), Some("$ev"));
        assert_eq!(n["msgtype"], "m.notice");
        assert!(
            n["formatted_body"]
                .as_str()
                .unwrap()
                .starts_with("&lt;b&gt;not yours")
        );
        assert_eq!(n["m.relates_to"]["m.in_reply_to"]["event_id"], "$ev");
    }
}
