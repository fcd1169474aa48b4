use serde_json::{Value, json};
use time::macros::datetime;

use super::*;
use crate::domain::Status;

const NOW: OffsetDateTime = datetime!(2026-11-21 12:00 UTC);
const WEB_URL: &str = "https://sayso.example.com/d/tok_abc";
const PUBLIC_URL: &str = "https://sayso.example.com";

/// The mail for a message of `purpose` about `decision`, whose answer page is `web_url`.
fn compose(
    purpose: Purpose,
    decision: &Decision,
    web_url: &str,
    public_url: &str,
    now: OffsetDateTime,
) -> Composed {
    compose_gathered(
        &T::default(),
        purpose,
        decision,
        web_url,
        public_url,
        (&Zone::utc(), now),
        (0, 0),
    )
}

fn decision(body: Value) -> Decision {
    Decision::asked(&body, NOW, datetime!(2026-11-21 14:05 UTC))
}

fn mail(purpose: Purpose, d: &Decision) -> Mail {
    match compose(purpose, d, WEB_URL, PUBLIC_URL, NOW) {
        Composed::Mail(m) => m,
        Composed::Nothing(why) | Composed::Broken(why) => panic!("no mail: {why}"),
    }
}

#[test]
fn the_ask_lists_the_options_and_links_to_the_page() {
    let d = decision(
        json!({"question": "Which plan?", "kind": "choose", "project": "infra",
        "options": [{"label": "A", "description": "cheap"}, "B <fast>"],
        "context_md": "Costs **differ**. <script>x</script>"}),
    );
    let m = mail(Purpose::Ask, &d);
    assert_eq!(m.subject, "[sayso] Which plan?");
    assert_eq!(
        m.message_id,
        "<decision-00000000-0000-0000-0000-000000000000@sayso.example.com>"
    );
    assert_eq!(m.in_reply_to, None);
    for part in [&m.text, &m.html] {
        assert!(
            part.contains("infra") && part.contains("Pick one of:"),
            "{part}"
        );
        assert!(part.contains("in 2 h 5 min"), "{part}");
        assert!(part.contains(WEB_URL), "{part}");
    }
    assert!(
        m.text.contains("  - A — cheap\n  - B <fast>\n"),
        "{}",
        m.text
    );
    assert!(m.text.contains("Costs **differ**."));
    assert!(m.html.contains("<strong>differ</strong>"), "{}", m.html);
    assert!(m.html.contains("B &#60;fast&#62;"), "{}", m.html);
    assert!(!m.html.contains("<script"), "{}", m.html);
    assert!(m.html.contains("Open to answer"));
}

#[test]
fn the_reminder_and_the_note_reply_to_the_ask() {
    let mut d = decision(json!({"question": "Deploy?", "kind": "bool"}));
    let ask = mail(Purpose::Ask, &d).message_id;
    let reminder = mail(Purpose::Reminder, &d);
    assert_eq!(reminder.subject, "Reminder: [sayso] Deploy?");
    assert_eq!(reminder.in_reply_to.as_deref(), Some(ask.as_str()));
    assert!(
        reminder
            .message_id
            .ends_with("-reminder@sayso.example.com>")
    );
    assert!(reminder.text.contains(WEB_URL) && reminder.html.contains(WEB_URL));

    d.status = Status::Answered;
    d.outcome = Some(json!(true));
    d.resolved_at = Some(datetime!(2026-11-21 12:34 UTC));
    let note = mail(Purpose::Resolved, &d);
    assert_eq!(note.subject, "Re: [sayso] Deploy?");
    assert_eq!(note.in_reply_to.as_deref(), Some(ask.as_str()));
    assert!(note.message_id.ends_with("-resolved@sayso.example.com>"));
    assert!(
        note.text.starts_with("Answered — 2026-11-21 12:34 UTC\n"),
        "{}",
        note.text
    );
    assert!(
        note.text
            .contains(r#"The user answered "Deploy?" with "yes"."#)
    );
}

#[test]
fn nothing_is_asked_once_the_decision_is_closed() {
    let mut d = decision(json!({"question": "Deploy?", "kind": "bool"}));
    d.status = Status::Cancelled;
    for purpose in [Purpose::Ask, Purpose::Reminder] {
        assert!(matches!(
            compose(purpose, &d, WEB_URL, PUBLIC_URL, NOW),
            Composed::Nothing(_)
        ));
    }
    assert!(matches!(
        compose(Purpose::Resolved, &d, WEB_URL, PUBLIC_URL, NOW),
        Composed::Mail(_)
    ));
}

#[test]
fn an_expiry_note_says_nobody_answered() {
    let mut d = decision(json!({"question": "Deploy?", "kind": "bool"}));
    d.status = Status::Expired;
    d.resolved_at = Some(d.expires_at);
    let note = mail(Purpose::Resolved, &d);
    assert!(note.text.starts_with("Expired — 2026-11-21 14:05 UTC\n"));
    assert!(note.text.contains("Nobody answered"), "{}", note.text);
}

#[test]
fn a_form_ask_names_its_questions() {
    let d = decision(json!({"question": "Setup", "kind": "form", "questions": [
        {"id": "db", "question": "Which database?", "options": ["PostgreSQL", "SQLite"]},
        {"question": "Anything else?"}]}));
    let m = mail(Purpose::Ask, &d);
    assert!(m.text.contains("2 questions:"), "{}", m.text);
    assert!(m.text.contains("Which database? (PostgreSQL / SQLite)"));
    assert!(m.text.contains("Anything else?"));
}

#[test]
fn long_questions_are_cut_at_a_word_in_the_subject() {
    let q = "Should we migrate the billing service to the new cluster tonight, \
             given that the load test showed a regression in p99 latency?";
    let s = subject_question(q);
    assert!(s.chars().count() <= SUBJECT_QUESTION_CHARS, "{s}");
    assert!(s.ends_with("p99…") || s.ends_with('…'), "{s}");
    assert!(q.starts_with(s.trim_end_matches('…')), "{s}");
    assert_eq!(subject_question("Deploy\nnow?"), "Deploy now?");
    let long_word = "x".repeat(200);
    assert_eq!(
        subject_question(&long_word).chars().count(),
        SUBJECT_QUESTION_CHARS
    );
}

#[test]
fn message_ids_use_the_public_host() {
    assert_eq!(message_id_host("http://127.0.0.1:8080"), "127.0.0.1");
    assert_eq!(message_id_host("https://a.example/sayso"), "a.example");
    assert_eq!(message_id_host("not a url"), "sayso.invalid");
}

#[tokio::test]
async fn bad_urls_and_addresses_are_named() {
    let e = EmailChannel::new("http://mail.example.com", "a@b.c")
        .err()
        .unwrap();
    assert!(e.contains("smtp://"), "{e}");
    let e = EmailChannel::new("mail.example.com", "a@b.c")
        .err()
        .unwrap();
    assert!(e.contains("not a URL"), "{e}");
    let e = EmailChannel::new("smtp://mail.example.com:25", "nobody")
        .err()
        .unwrap();
    assert!(e.contains("From address"), "{e}");
    for ok in [
        "smtp://127.0.0.1:2525",
        "smtp://user:pw@mail.example.com:587?tls=required",
        "smtps://mail.example.com",
    ] {
        assert!(
            EmailChannel::new(ok, "sayso <sayso@example.com>").is_ok(),
            "{ok}"
        );
    }
}
