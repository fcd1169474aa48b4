//! A Telegram message to a person who chose German (the stand-in of telegram_standin.rs):
//! sayso's words in German, the agent's as written, and the answer the buttons send the
//! same in every language.

use sayso::service::PersonSettings;

use crate::telegram::{ANA, approval, finish, start_polling};
use crate::telegram_standin::BotApiStandIn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_german_person_is_asked_in_german_and_the_settled_message_says_so_in_german() {
    let (_db, srv, api) = start_polling().await;
    srv.set_person(
        "ana",
        &PersonSettings {
            lang: Some("de".into()),
            ..PersonSettings::default()
        },
    )
    .await;
    let ana = ANA.to_string();
    let created = srv.create(approval("make release", &["ana"], 1)).await;
    let id = created["decision_id"].as_str().unwrap().to_string();
    let ask = api
        .wait_for(&ana, "the ask", |s| s.text.contains("make release"))
        .await;
    let buttons = ask.markup.as_ref().unwrap()["inline_keyboard"].to_string();
    assert!(
        buttons.contains("Erlauben") && buttons.contains("Ablehnen"),
        "{buttons}"
    );
    assert!(!buttons.contains("\"Allow\""), "{buttons}");
    assert!(ask.text.contains("<pre>make release</pre>"), "{}", ask.text);
    assert!(
        ask.text
            .contains("Claude Code möchte einen Bash-Befehl ausführen"),
        "{}",
        ask.text
    );

    // The German button sends the answer every language sends: Allow.
    let allow = BotApiStandIn::button(&ask, "Erlauben");
    api.queue(api.press_update(ANA, &ask, &allow));
    let settled = api
        .wait_for(&ana, "settled", |s| s.text.contains("Erlaubt von ana"))
        .await;
    assert!(settled.text.contains("in Telegram"), "{}", settled.text);
    assert_eq!(settled.message_id, ask.message_id, "edited in place");
    assert_eq!(srv.get(&id).await["outcome"], "Allow");

    // A second press is told, in German, who decided.
    api.queue(api.press_update(ANA, &ask, &allow));
    let answers = api.wait_calls("answerCallbackQuery", 2).await;
    let told = answers[1].body["text"].as_str().unwrap();
    assert!(told.contains("Erlaubt von ana"), "{told}");
    finish(srv, api).await;
}
