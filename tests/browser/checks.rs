//! Checks every page must pass on a phone (docs/PAGES.md): readable at 360 px without
//! sideways scrolling, a label on every input, tap targets of at least 44 px.

use serde_json::Value;

use crate::common::browser::Browser;

/// The smallest tap target, in CSS pixels (half a pixel of rounding allowed).
const MIN_TAP: f64 = 44.0;

/// What is wrong with the current page at phone width; empty when nothing is.
pub async fn phone_problems(b: &Browser) -> Vec<String> {
    let found = b
        .js(
            "const problems = [];
             const min = arguments[0] - 0.5;
             const doc = document.documentElement;
             const width = doc.clientWidth;
             if (doc.scrollWidth > width) {
                 // Name the innermost elements whose content sticks out of them, unless a
                 // scrolling box of their own holds it.
                 const clipped = el => {
                     for (let a = el; a && a !== document.body; a = a.parentElement)
                         if (getComputedStyle(a).overflowX !== 'visible') return true;
                     return false;
                 };
                 const out = [...document.body.querySelectorAll('*')]
                     .filter(el => (el.scrollWidth > el.clientWidth + 1
                                    || el.getBoundingClientRect().right > width + 1) && !clipped(el));
                 const wide = out
                     .filter(el => !out.some(o => o !== el && el.contains(o)))
                     .slice(0, 3)
                     .map(el => `<${el.tagName.toLowerCase()} class='${el.className}'> '${el.textContent.trim().slice(0, 40)}'`);
                 problems.push(`the page is ${doc.scrollWidth}px wide at ${width}px: ${wide.join(' ')}`);
             }
             const shown = el => {
                 const r = el.getBoundingClientRect();
                 return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
             };
             const describe = el => `<${el.tagName.toLowerCase()}${el.name ? ` name='${el.name}'` : ''}${el.id ? ` id='${el.id}'` : ''}> '${(el.innerText || el.value || '').trim().slice(0, 30)}'`;
             const small = (el, r) => {
                 if (r.height < min || r.width < min)
                     problems.push(`tap target ${Math.round(r.width)}×${Math.round(r.height)}px: ${describe(el)}`);
             };
             for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
                 const labels = el.labels ? [...el.labels] : [];
                 if (labels.length === 0 && !el.getAttribute('aria-label'))
                     problems.push(`no label: ${describe(el)}`);
                 if (!shown(el)) continue;
                 if (el.type === 'radio' || el.type === 'checkbox') {
                     // The person taps the label; the box itself may be small.
                     const rects = labels.filter(shown).map(l => l.getBoundingClientRect());
                     const best = rects.reduce((a, r) => r.height * r.width > a.height * a.width ? r : a,
                                               el.getBoundingClientRect());
                     small(el, best);
                 } else {
                     small(el, el.getBoundingClientRect());
                 }
             }
             for (const el of document.querySelectorAll('button, #pending a, #history a, nav a')) {
                 if (shown(el)) small(el, el.getBoundingClientRect());
             }
             return problems;",
            vec![Value::from(MIN_TAP)],
        )
        .await;
    strings(&found)
}

/// The strings of the list a page's script returned.
pub fn strings(found: &Value) -> Vec<String> {
    found
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| p.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Fails the test, naming the page, when [`phone_problems`] finds anything.
pub async fn assert_fit_for_a_phone(b: &Browser, page: &str) {
    let problems = phone_problems(b).await;
    assert!(
        problems.is_empty(),
        "the {page} page is not fit for a phone:\n  {}",
        problems.join("\n  ")
    );
}

/// `data-status` of `section#result`.
pub async fn result_status(b: &Browser) -> String {
    b.wait_for("section#result")
        .await
        .attr("data-status")
        .await
        .unwrap()
        .unwrap_or_default()
}
