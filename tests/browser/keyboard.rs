//! The keyboard alone answers a question and an approval (Tab to the control, then Enter or
//! Space), with the focus drawn as a ring at every stop and never under the bar fixed to the
//! bottom of the screen; and at 200 % zoom on a 360 px phone (a viewport 180 CSS px wide),
//! Deny and Allow stay on screen, whole, with nothing to scroll sideways.

use fantoccini::key::Key;
use serde_json::json;

use crate::a11y::{focused, press, tab_to};
use crate::checks::{phone_problems, result_status, strings};
use crate::common::browser::Browser;
use crate::common::server::s;
use crate::support::{awaited, bash, close, feed_url, setup};

/// Types `text` into whatever has the focus.
async fn type_here(b: &Browser, text: &str) {
    let here = b.client.active_element().await.expect("a focused element");
    here.send_keys(text).await.expect("typed");
}

/// Presses `key` on the focused control and waits for the page it sends the browser to.
async fn press_and_wait(b: &Browser, key: Key) {
    b.mark_page().await;
    press(b, key.into()).await;
    b.wait_for_new_page().await;
}

#[tokio::test]
async fn the_keyboard_alone_answers_a_question_and_an_approval() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    // Bound to the feed first, so every page starts with the way back to it.
    b.goto(&feed_url(&srv).await).await;

    // Yes or no: Tab to the remark, type it, Tab to Yes, Enter.
    let h = srv
        .create(
            json!({"question": "Deploy v2.3 to production?", "kind": "bool",
            "yes_label": "Ship it", "no_label": "Hold"}),
        )
        .await;
    b.goto(s(&h, "web_url")).await;
    tab_to(&b, "the remark", |f| f["id"] == "remark").await;
    type_here(&b, "after 6pm").await;
    tab_to(&b, "Ship it", |f| {
        f["name"] == "value" && f["value"] == "yes"
    })
    .await;
    b.screenshot("keyboard-bool-focus").await;
    press_and_wait(&b, Key::Enter).await;
    let d = awaited(&srv, &h).await;
    assert_eq!(
        (&d["outcome"], &d["remark"]),
        (&json!(true), &json!("after 6pm"))
    );

    // A choice: Tab into the options, an arrow picks the next one, Tab to Send, Space.
    let h = srv
        .create(json!({"question": "Which database?", "kind": "choose",
            "options": ["PostgreSQL", "SQLite", "MySQL"]}))
        .await;
    b.goto(s(&h, "web_url")).await;
    tab_to(&b, "the options", |f| f["type"] == "radio").await;
    press(&b, Key::Down.into()).await;
    let now = focused(&b).await;
    assert_eq!(now["value"], "SQLite", "{now}");
    assert_eq!(now["ring"], true, "{now}");
    tab_to(&b, "Send answer", |f| f["id"] == "submit").await;
    press_and_wait(&b, Key::Space).await;
    assert_eq!(awaited(&srv, &h).await["outcome"], "SQLite");

    // An approval: every stop on the way to Allow shows its ring clear of the bar of Deny
    // and Allow (the command is long enough to put the reason box behind the bar).
    let long = format!("cargo test --workspace {}", "--features extra ".repeat(60));
    let h = srv.create(bash(&long, "s1")).await;
    b.goto(&srv.person_url(s(&h, "web_url")).await).await;
    // The reason box scrolled to just under the bar, the focus on what comes before it: Tab
    // must bring the box out from under the bar, not leave it there because it is "on screen".
    let under = b
        .js(
            "document.querySelector('details.edit summary').focus({preventScroll: true});
             const box = document.getElementById('remark');
             scrollBy(0, box.getBoundingClientRect().top - (innerHeight - 30));
             const r = box.getBoundingClientRect();
             const top = document.elementFromPoint(r.left + r.width / 2, r.top + 5);
             return !!(top && top.closest('#actionbar'));",
            vec![],
        )
        .await;
    assert_eq!(under, json!(true), "the reason box starts under the bar");
    press(&b, Key::Tab.into()).await;
    let now = focused(&b).await;
    assert_eq!(
        (&now["id"], &now["ring"]),
        (&json!("remark"), &json!(true)),
        "{now}"
    );
    type_here(&b, "after the tests").await;
    b.screenshot("keyboard-approval-remark").await;
    tab_to(&b, "Allow", |f| f["id"] == "allow").await;
    b.screenshot("keyboard-approval-allow").await;
    press_and_wait(&b, Key::Enter).await;
    assert_eq!(result_status(&b).await, "allowed");
    let d = awaited(&srv, &h).await;
    assert_eq!(
        (&d["outcome"], &d["remark"]),
        (&json!("Allow"), &json!("after the tests"))
    );

    // And Deny, with Space, from the session page.
    let first = srv.create(bash("cargo build", "s2")).await;
    srv.create(bash("cargo test", "s2")).await;
    b.goto(&srv.url("/inbox")).await;
    tab_to(&b, "the session's link", |f| {
        f["tag"] == "a"
            && f["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Answer all")
    })
    .await;
    press_and_wait(&b, Key::Enter).await;
    assert_eq!(b.path().await, "/inbox/session");
    tab_to(&b, "Deny of call 1", |f| f["id"] == "deny-1").await;
    press_and_wait(&b, Key::Space).await;
    assert_eq!(awaited(&srv, &first).await["outcome"], "Deny");

    close(b, srv).await;
}

/// Where Deny (`deny`) and Allow (`allow`) are, as the page lays them out: what is wrong
/// with either, or nothing.
async fn deny_and_allow_problems(b: &Browser, deny: &str, allow: &str) -> Vec<String> {
    let found = b
        .js(
            "const problems = [];
             const w = document.documentElement.clientWidth, h = innerHeight;
             for (const id of arguments) {
                 const el = document.getElementById(id);
                 if (!el) { problems.push(`no #${id}`); continue; }
                 el.scrollIntoView({block: 'nearest'});
                 const r = el.getBoundingClientRect();
                 if (r.left < 0 || r.right > w + 0.5 || r.top < 0 || r.bottom > h + 0.5)
                     problems.push(`#${id} is off screen: ${JSON.stringify(r)} in ${w}×${h}`);
                 if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
                     problems.push(`#${id}'s text is cut: ${el.scrollWidth}×${el.scrollHeight} in ${el.clientWidth}×${el.clientHeight}`);
                 const text = document.createRange();
                 text.selectNodeContents(el);
                 const t = text.getBoundingClientRect();
                 if (t.left < r.left - 0.5 || t.right > r.right + 0.5)
                     problems.push(`#${id}'s text runs out of it: ${t.left}–${t.right} in ${r.left}–${r.right}`);
                 // A word split over two lines ('De ny') is as hard to read as a cut one.
                 const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
                 for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                     for (const m of n.data.matchAll(/\\S+/g)) {
                         const word = document.createRange();
                         word.setStart(n, m.index);
                         word.setEnd(n, m.index + m[0].length);
                         const lines = new Set([...word.getClientRects()].map(q => Math.round(q.top)));
                         if (lines.size > 1) problems.push(`#${id} breaks the word '${m[0]}' over ${lines.size} lines`);
                     }
                 }
                 const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                 if (!(top && (top === el || el.contains(top))))
                     problems.push(`#${id} is covered by <${top && top.tagName.toLowerCase()} class='${top && top.className}'>`);
                 for (let a = el.parentElement; a; a = a.parentElement) {
                     const s = getComputedStyle(a);
                     if (s.overflowX !== 'visible' && s.overflowX !== 'clip' && a.scrollWidth > a.clientWidth + 1)
                         problems.push(`#${id} sits in <${a.tagName.toLowerCase()} class='${a.className}'>, which scrolls sideways`);
                 }
             }
             return problems;",
            vec![json!(deny), json!(allow)],
        )
        .await;
    strings(&found)
}

#[tokio::test]
async fn deny_and_allow_stay_on_screen_at_200_percent_zoom() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    b.goto(&feed_url(&srv).await).await;
    let long = format!(
        "sudo rm -rf /srv/releases/{} && git push --force origin main",
        "payments-team-quarterly-".repeat(8)
    );
    let plain = srv.create(bash(&long, "zoom")).await;
    let cut = srv
        .create(bash(&format!("echo {}", "x".repeat(25_000)), "other"))
        .await;
    srv.create(bash("cargo test", "zoom")).await;
    let plain_page = srv.person_url(s(&plain, "web_url")).await;
    let cut_page = srv.person_url(s(&cut, "web_url")).await;

    // A 360×800 phone zoomed to 200 %: 180×400 CSS pixels, each drawn as 2×2.
    b.cdp(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 180, "height": 400, "deviceScaleFactor": 2, "mobile": true}),
    )
    .await;
    let mut found = Vec::new();
    for (url, deny, allow, name) in [
        (plain_page.clone(), "deny", "allow", "approval"),
        (
            format!("{plain_page}?confirm=Deny"),
            "confirm",
            "confirm",
            "confirm-deny",
        ),
        (cut_page, "deny", "allow-whole", "approval-cut"),
        (
            srv.url("/inbox/session?harness=claude&session=zoom"),
            "deny-1",
            "allow-1",
            "session",
        ),
    ] {
        b.goto(&url).await;
        let width = b
            .js("return document.documentElement.clientWidth", vec![])
            .await;
        assert_eq!(width, json!(180), "the zoomed viewport");
        let page = format!("{name} at 200 %");
        found.extend(
            deny_and_allow_problems(&b, deny, allow)
                .await
                .into_iter()
                .map(|p| format!("{page}: {p}")),
        );
        found.extend(
            phone_problems(&b)
                .await
                .into_iter()
                .map(|p| format!("{page}: {p}")),
        );
        b.js("scrollTo(0, 0); return null", vec![]).await;
        b.screenshot(&format!("zoom-200-{name}")).await;
    }
    b.cdp("Emulation.clearDeviceMetricsOverride", json!({}))
        .await;
    assert!(found.is_empty(), "at 200 % zoom:\n  {}", found.join("\n  "));

    // Still answerable there: Deny, tapped.
    b.goto(&plain_page).await;
    b.click_and_wait("#deny").await;
    assert_eq!(awaited(&srv, &plain).await["outcome"], "Deny");
    close(b, srv).await;
}
