//! What the accessibility tests check on a page (docs/PAGES.md, "Accessibility"): axe-core's
//! rules, run inside the page; the accessible name Chromium gives every control; and where
//! the keyboard's focus is and whether it shows.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::browser::Browser;
use crate::common::npm;

/// axe-core's `axe.min.js`, from npm at the version pinned in `tests/browser/axe/`, installed
/// once into the target directory. `None` (after a loud `SKIPPED`) when npm cannot install
/// it, except in CI, where that fails the test.
pub fn axe_source() -> Option<&'static str> {
    static SOURCE: OnceLock<Option<String>> = OnceLock::new();
    SOURCE
        .get_or_init(|| {
            if !npm::runs("npm") {
                npm::skip("npm is not installed: it installs axe-core for the browser tests");
                return None;
            }
            let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/axe");
            let modules = match npm::install_lockfile(&pinned, "axe-core") {
                Ok(modules) => modules,
                Err(why) => {
                    npm::skip(&format!("axe-core could not be installed: {why}"));
                    return None;
                }
            };
            let file = modules.join("axe-core/axe.min.js");
            let source = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            Some(source)
        })
        .as_deref()
}

/// Runs axe-core on the page open in `b` and returns its serious and critical violations,
/// one line each with the rule, its impact, where and how to fix it, labelled with `page`.
/// Moderate and minor ones are printed, not returned.
pub async fn axe_violations(b: &Browser, axe: &str, page: &str) -> Vec<String> {
    // WebDriver's scripts run outside the page's Content-Security-Policy, so axe needs no
    // exception in it.
    let version = b.js(&format!("{axe}\n;return axe.version"), vec![]).await;
    assert!(version.is_string(), "axe-core did not load: {version}");
    let found = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, {resultTypes: ['violations']})
               .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.map(n => ({target: n.target.join(' '), why: n.failureSummary}))}))))
               .catch(e => done({error: String(e)}));",
            vec![],
        )
        .await
        .unwrap_or_else(|e| panic!("axe.run on the {page} page: {e}"));
    let Some(violations) = found.as_array() else {
        panic!("axe.run failed on the {page} page: {found}");
    };
    let mut failing = Vec::new();
    for v in violations {
        let impact = v["impact"].as_str().unwrap_or_default();
        let head = format!(
            "{page}: {} ({impact}): {}",
            v["id"].as_str().unwrap_or_default(),
            v["help"].as_str().unwrap_or_default()
        );
        for n in v["nodes"].as_array().into_iter().flatten() {
            let line = format!(
                "{head}\n      at {}: {}",
                n["target"].as_str().unwrap_or_default(),
                n["why"].as_str().unwrap_or_default().replace('\n', " ")
            );
            if matches!(impact, "serious" | "critical") {
                failing.push(line);
            } else {
                eprintln!("axe-core, not failing: {line}");
            }
        }
    }
    failing
}

/// Every control on the page a person can reach, with no accessible name as Chromium's
/// accessibility tree computes it (what a screen reader says for it): buttons, links, form
/// fields, choices, a `<summary>`.
pub async fn nameless_controls(b: &Browser, page: &str) -> Vec<String> {
    let controls = b
        .client
        .find_all(fantoccini::Locator::Css(
            "a[href], button, input:not([type=hidden]), select, textarea, summary",
        ))
        .await
        .expect("the page's controls");
    let mut nameless = Vec::new();
    for c in &controls {
        if !c.is_displayed().await.unwrap_or(false) {
            continue;
        }
        if b.computed_label(c).await.trim().is_empty() {
            let html = c.html(false).await.unwrap_or_default();
            nameless.push(format!("{page}: no accessible name: {}", short(&html)));
        }
    }
    nameless
}

/// Runs the checks of this module on the page open in `b` (axe-core's when `axe` is given)
/// and adds what they find to `found`.
pub async fn check_page(b: &Browser, axe: Option<&str>, page: &str, found: &mut Vec<String>) {
    if let Some(axe) = axe {
        found.extend(axe_violations(b, axe, page).await);
    }
    found.extend(nameless_controls(b, page).await);
}

/// Fails the test with everything `found`, when there is anything.
pub fn assert_none_found(found: &[String], what: &str) {
    assert!(
        found.is_empty(),
        "{what}: {} problem(s):\n  {}",
        found.len(),
        found.join("\n  ")
    );
}

/// The element that has the keyboard's focus now, described, and whether its focus shows:
/// the browser's `:focus-visible` matches it and a ring of at least 2 px in another colour
/// than what is behind it (an outline, or a box shadow) is drawn, uncovered by the bar fixed
/// to the bottom of the screen.
pub async fn focused(b: &Browser) -> Value {
    b.js(
        "const el = document.activeElement;
         if (!el || el === document.body) return {tag: 'body', ring: false, why: 'nothing focused'};
         const s = getComputedStyle(el);
         const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2;
         const shadow = s.boxShadow !== 'none' && /\\b[2-9]px|\\b\\d{2,}px/.test(s.boxShadow);
         let bg = 'rgba(0, 0, 0, 0)';
         for (let a = el.parentElement; a && bg === 'rgba(0, 0, 0, 0)'; a = a.parentElement)
             bg = getComputedStyle(a).backgroundColor;
         const ringColour = outline ? s.outlineColor : s.boxShadow;
         const r = el.getBoundingClientRect();
         const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
         const y = Math.min(Math.max(r.top + Math.min(r.height / 2, 10), 0), innerHeight - 1);
         const top = document.elementFromPoint(x, y);
         const covered = !(top && (top === el || el.contains(top) || top.contains(el)
                                   || (el.labels && [...el.labels].some(l => l.contains(top)))));
         const why = !el.matches(':focus-visible') ? 'not :focus-visible'
             : !(outline || shadow) ? `no ring (outline ${s.outlineStyle} ${s.outlineWidth})`
             : ringColour.startsWith(bg) ? `a ring the colour of its background ${bg}`
             : covered ? `covered by <${top ? top.tagName.toLowerCase() + ' ' + top.className : 'nothing'}>`
             : '';
         return {tag: el.tagName.toLowerCase(), id: el.id, name: el.name || '',
                 value: el.value || '', text: (el.innerText || '').trim().slice(0, 40),
                 type: el.type || '', ring: why === '', why};",
        vec![],
    )
    .await
}

/// Presses `key` (a WebDriver key code, such as `Key::Tab`) on whatever has the focus.
pub async fn press(b: &Browser, key: char) {
    use fantoccini::actions::{InputSource, KeyAction, KeyActions};
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    b.client
        .perform_actions(keys)
        .await
        .unwrap_or_else(|e| panic!("pressing {key:?}: {e}"));
}

/// Presses Tab until the focus is on an element `is` says yes to, checking on every stop
/// that the focus shows; fails after 40 presses. The focused element's description.
pub async fn tab_to(b: &Browser, what: &str, is: impl Fn(&Value) -> bool) -> Value {
    use fantoccini::key::Key;
    let mut path = Vec::new();
    for _ in 0..40 {
        press(b, Key::Tab.into()).await;
        let now = focused(b).await;
        assert!(
            now["ring"] == json!(true),
            "the focus does not show on {now} (after {path:?})"
        );
        path.push(format!("{}#{}", now["tag"], now["id"]).replace('"', ""));
        if is(&now) {
            return now;
        }
    }
    panic!("Tab never reached {what}: {path:?}");
}

/// The first 160 characters of `html`.
fn short(html: &str) -> String {
    html.chars().take(160).collect()
}
