//! What runs, and every other field of a tool's input, in a Telegram message: the one-tap
//! Allow only when all of it is shown (the stand-in of telegram_standin.rs), and the longest
//! message an approval can make still within Telegram's 4096 characters.

use crate::fields;
use crate::telegram::{ANA, finish, start_polling};
use crate::telegram_standin::BotApiStandIn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_of_the_input_is_in_the_message_and_allow_is_one_tap_only_when_all_fit() {
    let (_db, srv, api) = start_polling().await;
    let ana = ANA.to_string();
    // Every field on its line, under the URL: Allow in one tap.
    srv.create(fields::puppeteer()).await;
    let ask = api
        .wait_for(&ana, "the puppeteer ask", |s| {
            s.text.contains("example.com")
        })
        .await;
    assert!(
        ask.text.contains(
            "with mcp__puppeteer__puppeteer_navigate (MCP server puppeteer)\n\
             <pre>https://example.com\nlaunchOptions.executablePath: /bin/sh</pre>"
        ),
        "{}",
        ask.text
    );
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        buttons.contains("Allow") && buttons.contains("Deny"),
        "{buttons}"
    );

    // A body over several lines is shown only as marked code points: Allow on the page.
    srv.create(fields::delete()).await;
    let ask = api
        .wait_for(&ana, "the DELETE ask", |s| s.text.contains("DELETE"))
        .await;
    assert!(
        ask.text
            .contains("method: DELETE\nbody: {⟨U+000A⟩  \"all\": true⟨U+000A⟩}"),
        "{}",
        ask.text
    );
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        !buttons.contains("Allow") && buttons.contains("Deny"),
        "{buttons}"
    );
    assert!(ask.text.contains("Allow on the page"), "{}", ask.text);
    finish(srv, api).await;
}

/// The stand-in refuses a text over 4096 characters as Telegram does: the longest ask
/// arrives, cut with notes and without a one-tap Allow, and so does its settled edit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_approval_is_delivered_cut_with_a_note_and_without_one_tap_allow() {
    let (_db, srv, api) = start_polling().await;
    let ana = ANA.to_string();
    let id = srv.create(fields::worst()).await["decision_id"]
        .as_str()
        .unwrap()
        .to_string();
    let ask = api
        .wait_for(&ana, "the longest ask", |s| s.text.contains("field0: "))
        .await;
    // Past Telegram's length even without the asker's context, what runs is cut at its end.
    assert!(ask.text.contains("more characters]</pre>"), "{}", ask.text);
    assert!(ask.text.contains("Allow on the page"), "{}", ask.text);
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        !buttons.contains("Allow") && buttons.contains("Deny"),
        "{buttons}"
    );
    let deny = BotApiStandIn::button(&ask, "Deny");
    api.queue(api.press_update(ANA, &ask, &deny));
    let settled = api
        .wait_for(&ana, "the settled edit", |s| {
            s.text.contains("Denied by ana")
        })
        .await;
    assert_eq!(settled.message_id, ask.message_id, "edited in place");
    assert_eq!(srv.get(&id).await["outcome"], "Deny");
    finish(srv, api).await;
}
