//! The Block Kit messages and modals, against Block Kit's shapes and limits.

use super::*;

fn id() -> Uuid {
    Uuid::parse_str("0190f0c4-5f4b-7d3e-9a1b-2c3d4e5f6a7b").unwrap()
}

fn ask(controls: Controls) -> ChatAsk {
    ChatAsk {
        title: "deploy-bot".into(),
        heading: None,
        question: "Deploy v1.2 to production?".into(),
        context: Some("**3** files changed, see [CI](https://ci.example/7)".into()),
        command: None,
        controls,
        link: "https://sayso.example/a/abc".into(),
        notes: vec![],
        t: Default::default(),
    }
}

fn button(label: &str, code: &str, style: ButtonStyle) -> ChatButton {
    ChatButton {
        label: label.into(),
        value: button_value(id(), code),
        style,
        recommended: false,
    }
}

fn approval() -> ChatAsk {
    let mut a = ask(Controls::Buttons(vec![
        button("Allow", "a", ButtonStyle::Primary),
        button("Deny", "d", ButtonStyle::Danger),
    ]));
    a.command = Some("$ rm -rf ./build && echo '<!channel>' `id`\n```".into());
    a
}

fn blocks_of<'a>(m: &'a SlackMessage, kind: &str) -> Vec<&'a Value> {
    m.blocks.iter().filter(|b| b["type"] == kind).collect()
}

/// The text of every mrkdwn object in `v`: what Slack reads as markup.
fn mrkdwn_texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| mrkdwn_texts(x, out)),
        Value::Object(o) => {
            if o.get("type").and_then(Value::as_str) == Some("mrkdwn") {
                out.push(o["text"].as_str().unwrap_or_default().to_string());
            }
            o.values().for_each(|x| mrkdwn_texts(x, out));
        }
        _ => {}
    }
}

#[test]
fn an_approval_has_allow_deny_and_the_command_apart() {
    let m = ask_message(&approval(), id(), None);
    let actions = blocks_of(&m, "actions");
    assert_eq!(actions.len(), 1);
    let elements = actions[0]["elements"].as_array().unwrap();
    assert_eq!(elements[0]["text"]["text"], "Allow");
    assert_eq!(elements[0]["style"], "primary");
    assert_eq!(elements[1]["text"]["text"], "Deny");
    assert_eq!(elements[1]["style"], "danger");
    assert_eq!(
        parse_button_value(elements[1]["value"].as_str().unwrap()),
        Some((id(), "d".to_string()))
    );
    // The page's link, last.
    assert_eq!(elements[2]["url"], "https://sayso.example/a/abc");
    // The command, exactly, in a preformatted rich text: no escaping needed or done.
    let rich = blocks_of(&m, "rich_text");
    assert_eq!(
        rich[0]["elements"][0]["elements"][0]["text"],
        "$ rm -rf ./build && echo '<!channel>' `id`\n```"
    );
    assert_eq!(rich[0]["elements"][0]["type"], "rich_text_preformatted");
}

#[test]
fn nothing_the_agent_wrote_becomes_a_mention_or_a_link() {
    let mut a = approval();
    a.title = "<!here> proj".into();
    a.question = "Ok? <!channel> <@U0ADMIN> <https://evil.example|Allow> &".into();
    a.context = Some("<!everyone>\n\nSee [click](https://evil.example) <b>x</b>".into());
    a.notes = vec!["<!subteam^S123> waiting".into()];
    let m = ask_message(&a, id(), Some("1 of 2 allowed: <@U1>"));
    let mut texts = vec![m.text.clone()];
    for b in &m.blocks {
        mrkdwn_texts(b, &mut texts);
    }
    assert!(texts.len() >= 4, "{texts:?}");
    for t in &texts {
        assert!(!t.contains('<') && !t.contains('>'), "{t}");
    }
    let section = &blocks_of(&m, "section")[0]["text"]["text"];
    assert_eq!(
        section,
        "Ok? &lt;!channel&gt; &lt;@U0ADMIN&gt; &lt;https://evil.example|Allow&gt; &amp;"
    );
    let context_section = &blocks_of(&m, "section")[1]["text"]["text"];
    assert!(
        context_section
            .as_str()
            .unwrap()
            .contains("click (https://evil.example)")
    );
    assert_eq!(
        blocks_of(&m, "context")[0]["elements"][0]["text"],
        "1 of 2 allowed: &lt;@U1&gt;"
    );
    assert!(m.text.contains("&lt;!channel&gt;"));
}

#[test]
fn choose_marks_the_recommended_and_clips_long_labels() {
    let mut rec = button(&"B".repeat(100), "o1", ButtonStyle::Primary);
    rec.recommended = true;
    let m = ask_message(
        &ask(Controls::Buttons(vec![
            button("Red", "o0", ButtonStyle::Plain),
            rec,
            button(&"C".repeat(100), "o2", ButtonStyle::Plain),
        ])),
        id(),
        None,
    );
    let elements = blocks_of(&m, "actions")[0]["elements"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(elements.len(), 4);
    assert!(elements[0].get("style").is_none());
    let rec_text = elements[1]["text"]["text"].as_str().unwrap();
    assert!(rec_text.starts_with("★ B"), "{rec_text}");
    assert_eq!(rec_text.chars().count(), MAX_BUTTON_TEXT);
    assert_eq!(
        elements[2]["text"]["text"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        MAX_BUTTON_TEXT
    );
    let ids: Vec<&str> = elements
        .iter()
        .map(|e| e["action_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "sayso.answer.o0",
            "sayso.answer.o1",
            "sayso.answer.o2",
            OPEN
        ]
    );
}

#[test]
fn a_choice_of_ones_own_is_a_button_not_a_note() {
    let mut a = ask(Controls::Buttons(vec![button(
        "Red",
        "o0",
        ButtonStyle::Plain,
    )]));
    a.notes = vec![a.t.tr("chat-own-answer"), "⚠ other note".into()];
    let m = ask_message(&a, id(), None);
    let e = blocks_of(&m, "actions")[0]["elements"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(e[1]["text"]["text"], "Other…");
    assert_eq!(e[1]["action_id"], REPLY);
    let notes = blocks_of(&m, "context")[0]["elements"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["text"], "⚠ other note");
}

#[test]
fn text_opens_a_modal_and_link_only_opens_the_page() {
    let m = ask_message(
        &ask(Controls::Reply {
            placeholder: Some("A name".into()),
        }),
        id(),
        None,
    );
    let e = &blocks_of(&m, "actions")[0]["elements"];
    assert_eq!(e[0]["action_id"], REPLY);
    assert_eq!(
        parse_button_value(e[0]["value"].as_str().unwrap()),
        Some((id(), TEXT_CODE.into()))
    );
    let m = ask_message(&ask(Controls::Link), id(), None);
    let e = blocks_of(&m, "actions")[0]["elements"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["url"], "https://sayso.example/a/abc");
    assert!(e[0].get("value").is_none());
    assert_eq!(e[0]["text"]["text"], "Answer on the page");
}

#[test]
fn a_long_question_and_context_stay_within_the_limits() {
    let mut a = approval();
    a.question = "Q&".repeat(4000);
    a.context = Some(
        (0..2000)
            .map(|i| format!("- item {i} <x>"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    a.title = "T".repeat(400);
    a.notes = (0..20).map(|i| format!("note {i}")).collect();
    let m = ask_message(&a, id(), Some("1 of 2"));
    assert!(m.blocks.len() <= MAX_BLOCKS);
    for b in &m.blocks {
        if b["type"] == "section" {
            let t = b["text"]["text"].as_str().unwrap();
            assert!(
                t.chars().count() <= MAX_SECTION_TEXT,
                "{}",
                t.chars().count()
            );
        }
        if b["type"] == "header" {
            assert!(b["text"]["text"].as_str().unwrap().chars().count() <= MAX_HEADER_TEXT);
        }
        if b["type"] == "context" {
            assert!(b["elements"].as_array().unwrap().len() <= MAX_CONTEXT_ELEMENTS);
        }
    }
    let sections = blocks_of(&m, "section");
    assert_eq!(sections.len(), 1 + CONTEXT_SECTIONS);
    assert!(
        sections[CONTEXT_SECTIONS]["text"]["text"]
            .as_str()
            .unwrap()
            .ends_with("(the rest is on the page)")
    );
    assert!(m.text.chars().count() <= MAX_FALLBACK_TEXT);
}

#[test]
fn what_runs_past_a_block_is_cut_with_a_note() {
    let mut a = approval();
    a.command = Some("x".repeat(MAX_SECTION_TEXT + 500));
    let m = ask_message(&a, id(), None);
    let text = blocks_of(&m, "rich_text")[0]["elements"][0]["elements"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.chars().count() <= MAX_SECTION_TEXT, "{}", text.len());
    assert!(text.ends_with("x… [cut: 540 more characters]"), "{text}");
}

#[test]
fn settled_keeps_the_question_and_drops_the_controls() {
    let m = settled_message(&approval(), "Allowed by ana from the feed, 04:12 UTC");
    let said = settled_message(&approval(), "Answered “<!here>” by ana");
    assert!(
        said.text.ends_with("“&lt;!here&gt;” by ana"),
        "{}",
        said.text
    );
    let notice = notice_message("A passkey <@U1>", "added & used", "https://x.example");
    assert_eq!(notice.text, "A passkey &lt;@U1&gt;: added &amp; used");
    assert!(blocks_of(&m, "actions").is_empty());
    let sections = blocks_of(&m, "section");
    assert_eq!(sections[0]["text"]["text"], "Deploy v1.2 to production?");
    assert_eq!(
        sections.last().unwrap()["text"]["text"],
        "*Allowed by ana from the feed, 04:12 UTC*"
    );
    assert!(m.text.contains("Allowed by ana"));
}

#[test]
fn the_modals_carry_the_decision_and_their_input() {
    let v = text_modal("Which colour?", None, id(), Some("e.g. blue"));
    assert_eq!(v["type"], "modal");
    assert_eq!(v["callback_id"], TEXT_MODAL);
    assert_eq!(
        parse_button_value(v["private_metadata"].as_str().unwrap()),
        Some((id(), TEXT_CODE.into()))
    );
    let input = v["blocks"].as_array().unwrap().last().unwrap();
    assert_eq!(input["block_id"], TEXT_INPUT);
    assert_eq!(input["element"]["action_id"], TEXT_INPUT);
    assert_eq!(input["element"]["placeholder"]["text"], "e.g. blue");
    assert!(input.get("optional").is_none());
    let a = approval();
    let v = deny_modal(&a.question, a.command.as_deref(), id());
    assert_eq!(v["callback_id"], DENY_MODAL);
    assert_eq!(v["title"]["text"], "Deny");
    let input = v["blocks"].as_array().unwrap().last().unwrap();
    assert_eq!(input["optional"], true);
    assert_eq!(input["block_id"], REASON_INPUT);
    // The command is shown in the modal too.
    assert!(
        v["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "rich_text")
    );
}
