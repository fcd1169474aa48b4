//! Hostile text from an agent (or from a person's remark) is shown as text and never runs:
//! every payload below would set `window.__xss` or the title `PWNED` if it ran.

use serde_json::{Value, json};

use crate::checks::result_status;
use crate::common::browser::Browser;
use crate::common::server::s;
use crate::support::{awaited, close, feed_url, setup};

/// Each payload, if it ran, would set a marker.
fn payloads() -> Vec<String> {
    let mark = "window.__xss=1;document.title='PWNED'";
    vec![
        format!("<script>{mark}</script>"),
        format!("<img src=x onerror=\"{mark}\">"),
        format!("[click me](javascript:{mark})"),
        "[x](JaVaScRiPt:window.__xss=1) [y](&#106;avascript:window.__xss=1)".to_owned(),
        "<javascript:window.__xss=1> ![i](javascript:window.__xss=1)".to_owned(),
        format!("<a href=\"javascript:{mark}\">raw link</a>"),
        format!("javascript:{mark}"),
        format!("<svg onload=\"{mark}\"><circle r=9></circle></svg>"),
        "<svg><script>window.__xss=1</script></svg>".to_owned(),
        "<iframe src=\"javascript:parent.__xss=1\" srcdoc=\"<script>parent.__xss=1</script>\">"
            .to_owned(),
        "<img src=x onerror=window.__xss=1 <b>unclosed <div title=\"".to_owned(),
        format!("\"><script>{mark}</script><input value=\""),
        "'><img src=x onerror=window.__xss=1>".to_owned(),
        "</textarea><script>window.__xss=1</script><textarea>".to_owned(),
        "<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=1>".to_owned(),
        "<style>*{display:none}</style><meta http-equiv=refresh content=0;url=/x>".to_owned(),
    ]
}

/// What would show that hostile text became markup: script elements, event handlers,
/// script URLs, frames, and the markers themselves.
const INSPECT: &str = "
    const bad = [];
    for (const script of document.scripts) {
        if (!script.src || new URL(script.src).origin !== location.origin)
            bad.push('script element: ' + script.outerHTML.slice(0, 80));
    }
    for (const el of document.querySelectorAll('*')) {
        for (const attr of el.attributes) {
            const name = attr.name.toLowerCase();
            if (name.startsWith('on'))
                bad.push(`event handler ${name} on <${el.tagName.toLowerCase()}>`);
            if (['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'srcdoc', 'content'].includes(name)
                && /^\\s*(javascript|vbscript|data)\\s*:/i.test(attr.value.replace(/[\\u0000-\\u0020]/g, '')))
                bad.push(`script URL in ${name} on <${el.tagName.toLowerCase()}>: ${attr.value.slice(0, 60)}`);
            if (name === 'srcdoc')
                bad.push(`srcdoc on <${el.tagName.toLowerCase()}>`);
        }
    }
    for (const el of document.querySelectorAll('iframe, frame, object, embed, base, meta[http-equiv], body style, form:not([action^=\"/\"])'))
        bad.push('element: ' + el.outerHTML.slice(0, 80));
    if (window.__xss !== undefined) bad.push('window.__xss was set');
    if (location.pathname === '/x') bad.push('a meta refresh ran');
    if (document.title === 'PWNED') bad.push('the title was set to PWNED');
    return bad;";

/// Fails the test when the current page shows any sign of hostile markup.
async fn assert_inert(b: &Browser, page: &str) {
    let bad = b.js(INSPECT, vec![]).await;
    assert_eq!(bad, json!([]), "hostile text became markup on the {page}");
}

async fn visible_text_of(b: &Browser, css: &str) -> String {
    b.find(css).await.text().await.unwrap_or_default()
}

#[tokio::test]
async fn hostile_text_is_shown_as_text_and_never_runs() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let payloads = payloads();
    let mut handles = Vec::new();
    for (i, p) in payloads.iter().enumerate() {
        assert!(
            p.chars().count() <= 100,
            "payload {i} is too long for a project name"
        );
        let h = srv
            .create(json!({
                "question": format!("Q{i} {p}"),
                "kind": "choose",
                "project": p,
                "context_md": format!("Context {i}: {p}\n\n{p}\n\n- item {p}\n"),
                "options": [
                    {"label": p, "description": p, "preview": p},
                    {"label": format!("safe {i}"), "preview": format!("**bold** {p}\n\n{p}")}
                ],
                "recommended": 0,
                "placeholder": p,
            }))
            .await;
        b.goto(s(&h, "web_url")).await;
        let page = format!("answer page of payload {i} ({p})");
        assert_inert(&b, &page).await;
        let label = visible_text_of(&b, "label[for=opt-0]").await;
        assert!(
            label.contains(p.as_str()),
            "{page}: the label shows {label:?}"
        );
        let heading = visible_text_of(&b, "h1").await;
        assert!(
            heading.contains(p.as_str()),
            "{page}: the question shows {heading:?}"
        );
        let shown = b.text().await.matches(p.as_str()).count();
        assert!(
            shown >= 3,
            "{page}: question, label and description visible, got {shown}"
        );
        let placeholder = b.attr_of("#other", "placeholder").await;
        assert_eq!(
            placeholder.as_deref(),
            Some(p.as_str()),
            "{page}: the placeholder"
        );
        if i == 0 {
            b.screenshot("hostile-choose").await;
        }
        handles.push(h);
    }

    // Hostile field titles, descriptions, choices and chips of forms.
    let mut properties = serde_json::Map::new();
    for (i, p) in payloads.iter().enumerate().take(8) {
        properties.insert(
            format!("f{i}"),
            json!({"type": "string", "title": p, "description": p}),
        );
    }
    properties.insert(
        "pick".to_owned(),
        json!({"type": "string", "enum": [&payloads[0], &payloads[11]], "title": "Pick"}),
    );
    properties.insert(
        "many".to_owned(),
        json!({"type": "array", "items": {"type": "string", "enum": [&payloads[1], &payloads[12]]}}),
    );
    let form = srv
        .create(json!({"question": "Hostile form", "kind": "form",
            "schema": {"type": "object", "properties": properties}}))
        .await;
    b.goto(s(&form, "web_url")).await;
    assert_inert(&b, "hostile schema form").await;
    let text = b.text().await;
    assert!(text.contains(payloads[0].as_str()) && text.contains(payloads[11].as_str()));
    let questions = srv
        .create(json!({"question": "Hostile questions", "kind": "form",
            "questions": payloads.iter().enumerate().take(10).map(|(i, p)| json!({
                "id": format!("q{i}"), "question": format!("{i}: {p}"), "header": p,
                "options": [{"label": p, "description": p, "preview": p}, {"label": "fine"}]
            })).collect::<Vec<Value>>()}))
        .await;
    b.goto(s(&questions, "web_url")).await;
    assert_inert(&b, "hostile questions form").await;

    // The feed lists them all, with the hostile project names as filter links.
    let feed = feed_url(&srv).await;
    b.goto(&feed).await;
    assert_inert(&b, "feed").await;
    for p in &payloads {
        let linked = b
            .js(
                "return [...document.querySelectorAll('a')].some(a => a.textContent.trim() === arguments[0]);",
                vec![json!(p)],
            )
            .await;
        assert_eq!(linked, true, "the feed has no project link reading {p:?}");
    }
    b.screenshot("hostile-feed").await;
    for p in [&payloads[0], &payloads[11]] {
        let filtered = format!(
            "{feed}?project={}",
            url::form_urlencoded::byte_serialize(p.as_bytes()).collect::<String>()
        );
        b.goto(&filtered).await;
        assert_inert(&b, &format!("feed filtered by {p}")).await;
    }

    // A person answers each with the hostile option and a hostile remark.
    for (i, (p, h)) in payloads.iter().zip(&handles).enumerate() {
        b.goto(s(h, "web_url")).await;
        b.click("label[for=opt-0]").await;
        b.type_into("#remark", p).await;
        b.click_and_wait("#submit").await;
        let d = awaited(&srv, h).await;
        assert_eq!(d["status"], "answered", "payload {i}: {d}");
        assert_eq!(
            d["outcome"],
            json!(p),
            "payload {i}: the label comes back unchanged"
        );
        assert_eq!(
            d["remark"],
            json!(p),
            "payload {i}: the remark comes back unchanged"
        );
        let page = format!("answered page of payload {i} ({p})");
        assert_eq!(result_status(&b).await, "answered", "{page}");
        assert_inert(&b, &page).await;
        let result = visible_text_of(&b, "#result").await;
        assert!(
            result.matches(p.as_str()).count() >= 2,
            "{page}: the answer and the remark show as text in #result: {result:?}"
        );
        if i == 1 {
            b.screenshot("hostile-answered").await;
        }
    }
    b.goto(&feed).await;
    assert_inert(&b, "feed with a hostile history").await;

    close(b, srv).await;
}
