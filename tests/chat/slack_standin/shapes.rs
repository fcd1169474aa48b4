//! Block Kit's shapes as Slack documents them: the checks every message, block and modal
//! sayso sends is held to.

use std::collections::HashSet;

use serde_json::Value;

pub(super) fn chars(v: &Value) -> usize {
    v.as_str().map_or(0, |s| s.chars().count())
}

/// A message's `text` and `blocks`.
pub fn check_message(body: &Value, problems: &mut Vec<String>) {
    let text = &body["text"];
    let blocks = &body["blocks"];
    if text.as_str().is_none_or(str::is_empty) && blocks.is_null() {
        problems.push("no text and no blocks".into());
    }
    if chars(text) > 40_000 {
        problems.push("text over 40000 characters".into());
    }
    check_mrkdwn("text", text.as_str().unwrap_or_default(), problems);
    if !blocks.is_null() {
        check_blocks(blocks, false, problems);
    }
}

/// A list of blocks: in a message, or (`modal`) in a view.
pub fn check_blocks(blocks: &Value, modal: bool, problems: &mut Vec<String>) {
    let Some(blocks) = blocks.as_array() else {
        problems.push("blocks is not an array".into());
        return;
    };
    let max = if modal { 100 } else { 50 };
    if blocks.len() > max {
        problems.push(format!("{} blocks, more than {max}", blocks.len()));
    }
    let mut block_ids = HashSet::new();
    for (i, block) in blocks.iter().enumerate() {
        let at = format!("blocks[{i}]");
        if let Some(id) = block.get("block_id") {
            if chars(id) == 0 || chars(id) > 255 {
                problems.push(format!("{at}: block_id empty or over 255"));
            }
            if !block_ids.insert(id.to_string()) {
                problems.push(format!("{at}: block_id {id} repeated"));
            }
        }
        match block["type"].as_str().unwrap_or_default() {
            "section" => {
                let text = &block["text"];
                check_text(&format!("{at}.text"), text, 3000, problems);
                if let Some(fields) = block["fields"].as_array() {
                    if fields.len() > 10 {
                        problems.push(format!("{at}: more than 10 fields"));
                    }
                    for (j, f) in fields.iter().enumerate() {
                        check_text(&format!("{at}.fields[{j}]"), f, 2000, problems);
                    }
                }
            }
            "header" => {
                check_text(&format!("{at}.text"), &block["text"], 150, problems);
                if block["text"]["type"] != "plain_text" {
                    problems.push(format!("{at}: a header's text must be plain_text"));
                }
            }
            "context" => {
                let elements = block["elements"].as_array().cloned().unwrap_or_default();
                if elements.is_empty() || elements.len() > 10 {
                    problems.push(format!("{at}: {} elements, not 1 to 10", elements.len()));
                }
                for (j, e) in elements.iter().enumerate() {
                    check_text(&format!("{at}.elements[{j}]"), e, 3000, problems);
                }
            }
            "actions" => {
                let elements = block["elements"].as_array().cloned().unwrap_or_default();
                if elements.is_empty() || elements.len() > 25 {
                    problems.push(format!("{at}: {} elements, not 1 to 25", elements.len()));
                }
                let mut action_ids = HashSet::new();
                for (j, e) in elements.iter().enumerate() {
                    let at = format!("{at}.elements[{j}]");
                    check_button(&at, e, problems);
                    if let Some(id) = e["action_id"].as_str()
                        && !action_ids.insert(id.to_string())
                    {
                        problems.push(format!("{at}: action_id {id} repeated in its block"));
                    }
                }
            }
            "rich_text" => {
                for (j, e) in block["elements"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let kind = e["type"].as_str().unwrap_or_default();
                    if !matches!(
                        kind,
                        "rich_text_section"
                            | "rich_text_preformatted"
                            | "rich_text_quote"
                            | "rich_text_list"
                    ) {
                        problems.push(format!("{at}.elements[{j}]: type {kind:?}"));
                    }
                    for (k, t) in e["elements"].as_array().into_iter().flatten().enumerate() {
                        if t["type"] == "text" && t["text"].as_str().is_none_or(str::is_empty) {
                            problems.push(format!("{at}.elements[{j}].elements[{k}]: empty text"));
                        }
                    }
                }
            }
            "divider" => {}
            "input" if modal => {
                check_text(&format!("{at}.label"), &block["label"], 2000, problems);
                let e = &block["element"];
                if e["type"] != "plain_text_input" {
                    problems.push(format!("{at}: input element {}", e["type"]));
                }
                if chars(&e["action_id"]) == 0 || chars(&e["action_id"]) > 255 {
                    problems.push(format!("{at}: action_id empty or over 255"));
                }
                if e["max_length"].as_u64().is_some_and(|n| n > 3000) {
                    problems.push(format!("{at}: max_length over 3000"));
                }
                if !e["placeholder"].is_null() {
                    check_text(
                        &format!("{at}.placeholder"),
                        &e["placeholder"],
                        150,
                        problems,
                    );
                }
            }
            other => problems.push(format!("{at}: block type {other:?} not allowed here")),
        }
    }
}

pub(super) fn check_button(at: &str, e: &Value, problems: &mut Vec<String>) {
    if e["type"] != "button" {
        problems.push(format!("{at}: element type {}", e["type"]));
        return;
    }
    check_text(&format!("{at}.text"), &e["text"], 75, problems);
    if e["text"]["type"] != "plain_text" {
        problems.push(format!("{at}: a button's text must be plain_text"));
    }
    if chars(&e["action_id"]) == 0 || chars(&e["action_id"]) > 255 {
        problems.push(format!("{at}: action_id empty or over 255"));
    }
    if chars(&e["value"]) > 2000 {
        problems.push(format!("{at}: value over 2000"));
    }
    if chars(&e["url"]) > 3000 {
        problems.push(format!("{at}: url over 3000"));
    }
    if let Some(style) = e.get("style")
        && style != "primary"
        && style != "danger"
    {
        problems.push(format!("{at}: style {style}"));
    }
}

/// A text object: its type, its length, and for mrkdwn that nothing in it mentions anyone.
pub(super) fn check_text(at: &str, t: &Value, max: usize, problems: &mut Vec<String>) {
    let kind = t["type"].as_str().unwrap_or_default();
    if !matches!(kind, "plain_text" | "mrkdwn") {
        problems.push(format!("{at}: text type {kind:?}"));
        return;
    }
    let n = chars(&t["text"]);
    if n == 0 || n > max {
        problems.push(format!("{at}: {n} characters, not 1 to {max}"));
    }
    if kind == "mrkdwn" {
        check_mrkdwn(at, t["text"].as_str().unwrap_or_default(), problems);
    }
}

/// What Slack would read as a mention, a broadcast or a link in mrkdwn: `<!…>`, `<@…>`,
/// `<#…>` and `<http…|…>`. sayso's own texts have none (a link to its page is a button).
pub(super) fn check_mrkdwn(at: &str, text: &str, problems: &mut Vec<String>) {
    for (i, _) in text.match_indices('<') {
        let rest = &text[i + 1..];
        if rest.starts_with('!') || rest.starts_with('@') || rest.starts_with('#') {
            problems.push(format!("{at}: a mention or broadcast: {:.40}", &text[i..]));
        } else if rest.starts_with("http") || rest.starts_with("mailto:") {
            // A link is allowed only when its words are its own address.
            let inner = rest.split('>').next().unwrap_or_default();
            if let Some((url, words)) = inner.split_once('|')
                && url != words
                && !is_sayso_link(url)
            {
                problems.push(format!(
                    "{at}: a link with words over it: {:.60}",
                    &text[i..]
                ));
            }
        }
    }
}

/// sayso's own page, which its private notes may link to.
pub(super) fn is_sayso_link(url: &str) -> bool {
    url.starts_with("http://127.0.0.1:")
}

/// A modal view.
pub fn check_view(view: &Value, problems: &mut Vec<String>) {
    if view["type"] != "modal" {
        problems.push(format!("view type {}", view["type"]));
    }
    for (field, required) in [("title", true), ("submit", false), ("close", false)] {
        let t = &view[field];
        if t.is_null() {
            if required {
                problems.push(format!("view without {field}"));
            }
            continue;
        }
        check_text(&format!("view.{field}"), t, 24, problems);
        if t["type"] != "plain_text" {
            problems.push(format!("view.{field} must be plain_text"));
        }
    }
    if chars(&view["private_metadata"]) > 3000 {
        problems.push("private_metadata over 3000".into());
    }
    if chars(&view["callback_id"]) > 255 {
        problems.push("callback_id over 255".into());
    }
    let has_input = view["blocks"]
        .as_array()
        .is_some_and(|b| b.iter().any(|b| b["type"] == "input"));
    if has_input && view["submit"].is_null() {
        problems.push("a modal with an input needs submit".into());
    }
    check_blocks(&view["blocks"], true, problems);
}
