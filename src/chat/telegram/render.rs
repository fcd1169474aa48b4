//! An ask as a Telegram message: HTML (Telegram's `parse_mode: HTML`), with everything the
//! asker wrote escaped, what runs in a `<pre>` block, and the controls as an inline keyboard
//! (or a forced reply for a text). Telegram allows 4096 characters a message, counted once
//! the HTML is read; the parts are cut before that (chat/mod.rs), and what all of them
//! together still have too many of is cut from the asker's context, then from what runs,
//! each with a note, so that Telegram never refuses an ask for its length.

use serde_json::{Value, json};

use super::super::{ALLOW_CODE, ButtonStyle, ChatAsk, Controls};
use super::markdown::{escape, escape_attr};
use crate::domain::chat::parse_button_value;
use crate::render::visible::{Lines, clip};

/// The most characters of a message's text Telegram takes, counted as it does: in UTF-16
/// code units of the text its HTML shows.
pub const MAX_TEXT: usize = 4096;
/// Room kept for the note that says a part was cut ("… [cut: 1,234 more characters]").
const NOTE_ROOM: usize = 40;

/// `ask` cut to fit Telegram's length with `footer` (a settled or progress line) under it:
/// what all its parts together have too many characters of is cut from the asker's context,
/// then from what runs, each with a note. A message whose command is cut no longer shows all
/// that runs, so its Allow is given on the page (as chat/mod.rs does for any such message).
pub fn fit(mut ask: ChatAsk, footer: Option<&str>) -> ChatAsk {
    loop {
        let over = shown_len(&text(&ask, footer)).saturating_sub(MAX_TEXT);
        // The asker's context gives way first, then what runs; the page shows all of both.
        let part = match (over, &ask.context, &ask.command) {
            (0, _, _) => return ask,
            (_, Some(_), _) => &mut ask.context,
            (_, None, Some(_)) => {
                allow_on_the_page(&mut ask);
                &mut ask.command
            }
            (_, None, None) => return ask,
        };
        let whole = part.take().unwrap_or_default();
        let keep = whole.chars().count().saturating_sub(over + NOTE_ROOM);
        if keep > 0 {
            *part = Some(clip(&whole, keep, Lines::Kept).with_note());
        }
    }
}

/// Takes the one-tap Allow off an approval's message, saying that the page gives it.
fn allow_on_the_page(ask: &mut ChatAsk) {
    if let Controls::Buttons(buttons) = &mut ask.controls {
        let before = buttons.len();
        buttons.retain(|b| parse_button_value(&b.value).is_none_or(|(_, code)| code != ALLOW_CODE));
        if buttons.len() < before {
            ask.notes.push(ask.t.tr("mail-allow-on-the-page"));
        }
    }
}

/// How many characters Telegram counts in `html`: the text outside the tags, an entity as
/// one, in UTF-16 code units. (Every `<` and `&` of the text itself is escaped.)
pub fn shown_len(html: &str) -> usize {
    let (mut n, mut in_tag, mut in_entity) = (0, false, false);
    for c in html.chars() {
        match c {
            '>' if in_tag => in_tag = false,
            _ if in_tag => {}
            '<' => in_tag = true,
            ';' if in_entity => in_entity = false,
            _ if in_entity => {}
            '&' => {
                in_entity = true;
                n += 1;
            }
            c => n += c.len_utf16(),
        }
    }
    n
}

/// The message's text, with `footer` (a settled or progress line) at the end when given.
/// (`fit` keeps it within Telegram's length.)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatButton;

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
            t: Default::default(),
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

    fn allow() -> ChatButton {
        ChatButton {
            label: "Allow".into(),
            value: crate::domain::chat::button_value(uuid::Uuid::nil(), ALLOW_CODE),
            style: ButtonStyle::Primary,
            recommended: false,
        }
    }

    fn deny() -> ChatButton {
        ChatButton {
            value: crate::domain::chat::button_value(uuid::Uuid::nil(), "d"),
            label: "Deny".into(),
            ..allow()
        }
    }

    #[test]
    fn a_message_too_long_for_telegram_is_cut_with_a_note_context_first() {
        let mut a = ask(Controls::Link);
        a.context = Some("<&>👍".repeat(1000));
        a.command = Some("c".repeat(2500));
        a.controls = Controls::Buttons(vec![allow(), deny()]);
        let fitted = fit(a.clone(), Some("Allowed by ana"));
        let t = text(&fitted, Some("Allowed by ana"));
        assert!(shown_len(&t) <= MAX_TEXT, "{}", shown_len(&t));
        assert!(
            t.contains(&format!("<pre>{}</pre>", "c".repeat(2500))),
            "{t}"
        );
        assert!(t.contains("more characters]"), "{t}");
        assert_eq!(
            fitted.controls, a.controls,
            "what runs is whole: Allow stays"
        );
        // With no context to give way, what runs is cut, with its note, and Allow is given
        // on the page.
        a.context = None;
        a.command = Some("<".repeat(5000));
        let fitted = fit(a, None);
        let t = text(&fitted, None);
        assert!(shown_len(&t) <= MAX_TEXT, "{}", shown_len(&t));
        assert!(t.contains("more characters]</pre>"), "{t}");
        assert_eq!(fitted.controls, Controls::Buttons(vec![deny()]));
        assert!(
            t.contains("Allow on the page: it shows all that runs."),
            "{t}"
        );
        assert_eq!(shown_len("<b>a&amp;b</b>\n<a href=\"x\">👍</a>"), 6);
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
