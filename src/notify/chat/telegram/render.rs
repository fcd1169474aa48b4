//! An ask as a Telegram message: HTML (Telegram's `parse_mode: HTML`), with everything the
//! asker wrote escaped, what runs in a `<pre>` block, and the controls as an inline keyboard
//! (or a forced reply for a text). Telegram allows 4096 characters a message; the parts are
//! cut well below that (notify/chat).

use serde_json::{Value, json};

use super::super::{ButtonStyle, ChatAsk, Controls};

/// The message's text, with `footer` (a settled or progress line) at the end when given.
pub fn text(ask: &ChatAsk, footer: Option<&str>) -> String {
    let mut out = format!("<b>{}</b>", escape(&ask.title));
    if let Some(h) = &ask.heading {
        out.push_str(&format!(" · <i>{}</i>", escape(h)));
    }
    out.push('\n');
    out.push_str(&escape(&ask.question));
    if let Some(command) = &ask.command {
        out.push_str(&format!("\n<pre>{}</pre>", escape(command)));
    }
    if let Some(context) = &ask.context {
        out.push_str(&format!("\n\n{}", super::markdown::to_html(context)));
    }
    for note in &ask.notes {
        out.push_str(&format!("\n{}", escape(note)));
    }
    match (&ask.controls, footer) {
        (_, Some(f)) => out.push_str(&format!("\n\n<b>{}</b>", escape(f))),
        (Controls::Reply { .. }, None) => {
            out.push_str("\n\nReply to this message with your answer.");
        }
        (Controls::Link, None) => out.push_str("\n\nAnswer on the page:"),
        (Controls::Buttons(_), None) => {}
    }
    out.push_str(&format!(
        "\n<a href=\"{}\">Open the page</a>",
        escape_attr(&ask.link)
    ));
    out
}

/// The message's `reply_markup`: the buttons as an inline keyboard (Allow and Deny side by
/// side, options one a row), a forced reply for a text; none once settled.
pub fn markup(ask: &ChatAsk) -> Option<Value> {
    match &ask.controls {
        Controls::Buttons(buttons) => {
            let keys: Vec<Value> = buttons
                .iter()
                .map(|b| {
                    let mark = match (b.recommended, b.style) {
                        (true, _) => "★ ",
                        (false, ButtonStyle::Danger) => "✋ ",
                        (false, ButtonStyle::Primary | ButtonStyle::Plain) => "",
                    };
                    json!({"text": format!("{mark}{}", b.label), "callback_data": b.value})
                })
                .collect();
            let rows: Vec<Value> = if keys.len() <= 2 {
                vec![Value::Array(keys)]
            } else {
                keys.into_iter().map(|k| json!([k])).collect()
            };
            Some(json!({ "inline_keyboard": rows }))
        }
        Controls::Reply { placeholder } => {
            let mut m = json!({"force_reply": true});
            if let Some(p) = placeholder {
                m["input_field_placeholder"] = json!(p.chars().take(64).collect::<String>());
            }
            Some(m)
        }
        Controls::Link => None,
    }
}

/// Text for Telegram's HTML: `&`, `<` and `>` as entities, so nothing the asker wrote is
/// markup.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Text for an HTML attribute's double quotes.
pub fn escape_attr(s: &str) -> String {
    escape(s).replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::chat::ChatButton;

    fn ask(controls: Controls) -> ChatAsk {
        ChatAsk {
            title: "shop <b>".into(),
            heading: None,
            question: "Deploy </pre><a href=\"x\">now</a>?".into(),
            context: Some("**bold** & <i>".into()),
            command: Some("rm -rf build/ </pre>".into()),
            notes: vec![],
            controls,
            link: "https://s.example/a/t\"x".into(),
        }
    }

    #[test]
    fn what_the_asker_wrote_is_never_markup() {
        let t = text(&ask(Controls::Link), None);
        assert!(
            t.contains("Deploy &lt;/pre&gt;&lt;a href=\"x\"&gt;now&lt;/a&gt;?"),
            "{t}"
        );
        assert!(t.contains("<pre>rm -rf build/ &lt;/pre&gt;</pre>"), "{t}");
        assert!(t.contains("<b>shop &lt;b&gt;</b>"), "{t}");
        assert!(t.contains("href=\"https://s.example/a/t&quot;x\""), "{t}");
        assert_eq!(t.matches("<pre>").count(), 1);
    }

    #[test]
    fn buttons_become_an_inline_keyboard_and_a_text_a_forced_reply() {
        let b = |label: &str, value: &str, recommended| ChatButton {
            label: label.into(),
            value: value.into(),
            style: ButtonStyle::Plain,
            recommended,
        };
        let m = markup(&ask(Controls::Buttons(vec![
            b("Red", "id.o0", false),
            b("Blue", "id.o1", true),
            b("Green", "id.o2", false),
        ])))
        .unwrap();
        assert_eq!(m["inline_keyboard"].as_array().unwrap().len(), 3);
        assert_eq!(m["inline_keyboard"][1][0]["text"], "★ Blue");
        assert_eq!(m["inline_keyboard"][1][0]["callback_data"], "id.o1");
        let r = markup(&ask(Controls::Reply {
            placeholder: Some("a name".into()),
        }))
        .unwrap();
        assert_eq!(
            r,
            json!({"force_reply": true, "input_field_placeholder": "a name"})
        );
        assert!(markup(&ask(Controls::Link)).is_none());
    }
}
