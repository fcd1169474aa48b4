//! The email channel against a real SMTP server (aiosmtpd, see tests/common/smtp.rs): what
//! arrives, how it is threaded, and how refusals and an unreachable server are reported.

mod common;

use common::outbox::first_try;
use common::port::free_port;
use common::server::{TestServer, fresh_server, s};
use common::smtp::{ReceivedMail, SmtpSink};
use sayso::courier::{Courier, Delivering, Delivery};
use sayso::domain::Decision;
use sayso::domain::inbox::{Inbox, InboxChannels};
use sayso::domain::outbox::{Channel, Purpose, Route};
use sayso::notify::email::EmailChannel;
use serde_json::{Value, json};
use uuid::Uuid;

const FROM: &str = "sayso <sayso@example.com>";
const TO: &str = "ada@example.com";

/// A server with one decision, and what a channel is handed to deliver its messages.
struct Fixture {
    srv: TestServer,
    _db: common::db::SqliteTestDb,
    decision: Decision,
    inbox: Inbox,
    web_url: String,
}

impl Fixture {
    async fn new(body: Value) -> Fixture {
        let (db, srv) = fresh_server().await;
        let handle = srv.create(body).await;
        let web_url = s(&handle, "web_url").to_string();
        let id: Uuid = s(&handle, "decision_id").parse().unwrap();
        let inbox = srv.default_inbox().await;
        let decision = srv.svc.store().decision(None, id).await.unwrap().unwrap();
        assert_eq!(srv.svc.web_url(&decision), web_url);
        Fixture {
            srv,
            _db: db,
            decision,
            inbox,
            web_url,
        }
    }

    /// Reads the decision again, after an answer.
    async fn reload(&mut self) {
        let id = self.decision.id;
        self.decision = self
            .srv
            .svc
            .store()
            .decision(None, id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(self.srv.svc.web_url(&self.decision), self.web_url);
    }

    /// Delivers a message of `purpose` to `to` (the inbox's channel address) through `ch`.
    async fn deliver(&self, ch: &EmailChannel, purpose: &str, to: Option<&str>) -> Delivery {
        let channels = InboxChannels {
            email: to.map(str::to_owned),
            ..InboxChannels::default()
        };
        self.deliver_with(ch, purpose, &self.inbox, &channels).await
    }

    async fn deliver_with(
        &self,
        ch: &EmailChannel,
        purpose: &str,
        inbox: &Inbox,
        channels: &InboxChannels,
    ) -> Delivery {
        let message = first_try(
            self.decision.id,
            Route::Email,
            Purpose::parse(purpose).expect("a purpose"),
            self.decision.created_at,
            self.decision.expires_at,
        );
        let view = self.srv.svc.view(&self.decision).await.unwrap();
        let person = self.srv.svc.store().person(inbox.id).await.unwrap();
        let d = Delivering {
            message: &message,
            decision: &self.decision,
            view: &view,
            inbox,
            person: person.as_ref(),
            channels,
            zone: &sayso::render::Zone::utc(),
            web_url: &self.web_url,
            public_url: &self.srv.base,
            outbox: &self.srv.svc.outbox(),
        };
        ch.deliver(&d).await
    }

    /// The ask's Message-ID as the tests expect it.
    fn ask_id(&self) -> String {
        format!("<decision-{}@127.0.0.1>", self.decision.id)
    }
}

/// Every `http(s)://` link in a text: `href`s and bare URLs.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("http") {
        let tail = &rest[i..];
        if tail.starts_with("http://") || tail.starts_with("https://") {
            let end = tail
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>'))
                .unwrap_or(tail.len());
            found.push(tail[..end].to_string());
            rest = &tail[end..];
        } else {
            rest = &tail[4..];
        }
    }
    found
}

fn one(mails: &[ReceivedMail]) -> &ReceivedMail {
    assert_eq!(mails.len(), 1, "{mails:#?}");
    &mails[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ask_arrives_with_text_and_html_and_only_the_page_link() {
    let Some(sink) = SmtpSink::start().await else {
        return;
    };
    let f = Fixture::new(
        json!({"question": "Which plan?", "kind": "choose", "project": "infra",
        "options": ["Plan A", "Plan B"], "context_md": "Costs **differ** a lot."}),
    )
    .await;
    let ch = EmailChannel::new(&sink.url(), FROM).unwrap();
    assert_eq!(ch.channel(), Channel::Email);

    let sent = f.deliver(&ch, "ask", Some(TO)).await;
    assert_eq!(sent, Delivery::Sent(Some(format!("to {TO}"))));
    let mails = sink.wait_for(1).await;
    let mail = one(&mails);
    assert_eq!(mail.rcpt_tos, vec![TO.to_string()]);
    assert_eq!(mail.mail_from, "sayso@example.com");
    assert_eq!(mail.header("Subject"), Some("[sayso] Which plan?"));
    assert_eq!(mail.header("Message-ID"), Some(f.ask_id().as_str()));
    assert_eq!(mail.header("In-Reply-To"), None);
    assert_eq!(mail.content_type, "multipart/alternative");

    let text = mail.part("text/plain").expect("a text part");
    let html = mail.part("text/html").expect("an HTML part");
    for part in [text, html] {
        assert!(
            part.contains("Which plan?") && part.contains("infra"),
            "{part}"
        );
        assert!(part.contains("Plan A") && part.contains("Plan B"), "{part}");
        assert!(part.contains("Expires in "), "{part}");
        let links = links(part);
        assert!(!links.is_empty(), "{part}");
        assert!(links.iter().all(|l| *l == f.web_url), "{links:?}");
    }
    assert!(text.contains("Costs **differ** a lot."), "{text}");
    assert!(html.contains("<strong>differ</strong>"), "{html}");
    assert!(html.contains("Open to answer"), "{html}");
    assert!(!html.contains("<form"), "{html}");

    // Following the link, as a mail scanner would, decides nothing.
    let page = f.srv.client.get(&f.web_url).send().await.unwrap();
    assert!(page.status().is_success());
    assert_eq!(
        f.srv.get(&f.decision.id.to_string()).await["status"],
        "pending"
    );
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reminder_and_the_resolved_note_reply_to_the_ask() {
    let Some(sink) = SmtpSink::start().await else {
        return;
    };
    let mut f = Fixture::new(json!({"question": "Deploy to production?", "kind": "bool"})).await;
    let ch = EmailChannel::new(&sink.url(), FROM).unwrap();
    let ask = f.ask_id();
    let id = f.decision.id;

    assert!(matches!(
        f.deliver(&ch, "ask", Some(TO)).await,
        Delivery::Sent(_)
    ));
    assert!(matches!(
        f.deliver(&ch, "reminder", Some(TO)).await,
        Delivery::Sent(_)
    ));
    let (status, _) = f.srv.answer(&f.web_url, json!({"value": true})).await;
    assert!(status.is_success(), "{status}");
    f.reload().await;
    assert!(matches!(
        f.deliver(&ch, "resolved", Some(TO)).await,
        Delivery::Sent(_)
    ));

    let mails = sink.wait_for(3).await;
    assert_eq!(mails.len(), 3);
    let reminder = &mails[1];
    assert_eq!(
        reminder.header("Subject"),
        Some("Reminder: [sayso] Deploy to production?")
    );
    assert_eq!(
        reminder.header("Message-ID"),
        Some(format!("<decision-{id}-reminder@127.0.0.1>").as_str())
    );
    assert_eq!(reminder.header("In-Reply-To"), Some(ask.as_str()));
    assert_eq!(reminder.header("References"), Some(ask.as_str()));
    for part in ["text/plain", "text/html"] {
        let body = reminder.part(part).unwrap();
        assert!(links(body).iter().all(|l| *l == f.web_url), "{body}");
        assert!(body.contains("Deploy to production?"), "{body}");
    }

    let note = &mails[2];
    assert_eq!(
        note.header("Subject"),
        Some("Re: [sayso] Deploy to production?")
    );
    assert_eq!(
        note.header("Message-ID"),
        Some(format!("<decision-{id}-resolved@127.0.0.1>").as_str())
    );
    assert_eq!(note.header("In-Reply-To"), Some(ask.as_str()));
    assert_eq!(note.header("References"), Some(ask.as_str()));
    let text = note.part("text/plain").unwrap();
    assert!(text.starts_with("Answered — "), "{text}");
    assert!(
        text.contains(r#"The user answered "Deploy to production?" with "yes"."#),
        "{text}"
    );
    assert!(note.part("text/html").unwrap().contains("Answered"));

    // Nothing more is asked of a decision that is answered.
    assert!(matches!(
        f.deliver(&ch, "reminder", Some(TO)).await,
        Delivery::Skipped(_)
    ));
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_server_that_is_down_means_retry_and_once_up_exactly_one_copy_arrives() {
    if common::smtp::python().is_none() {
        return;
    }
    let f = Fixture::new(json!({"question": "Rotate the keys", "kind": "todo"})).await;
    let port = free_port();
    let ch = EmailChannel::new(&format!("smtp://127.0.0.1:{port}"), FROM).unwrap();

    let first = f.deliver(&ch, "ask", Some(TO)).await;
    assert!(matches!(first, Delivery::Retry(_)), "{first:?}");

    let sink = SmtpSink::start_on(port).await.unwrap();
    let second = f.deliver(&ch, "ask", Some(TO)).await;
    assert_eq!(second, Delivery::Sent(Some(format!("to {TO}"))));
    sink.wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let mails = sink.received();
    assert_eq!(one(&mails).header("Message-ID"), Some(f.ask_id().as_str()));
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_address_fails_and_a_busy_server_means_retry() {
    let Some(sink) = SmtpSink::start().await else {
        return;
    };
    let f = Fixture::new(json!({"question": "Deploy?", "kind": "bool"})).await;
    let ch = EmailChannel::new(&sink.url(), FROM).unwrap();

    let refused = f.deliver(&ch, "ask", Some("reject@example.com")).await;
    assert!(
        matches!(&refused, Delivery::Failed(m) if m.contains("550")),
        "{refused:?}"
    );
    let busy = f.deliver(&ch, "ask", Some("busy@example.com")).await;
    assert!(
        matches!(&busy, Delivery::Retry(m) if m.contains("451")),
        "{busy:?}"
    );
    let malformed = f.deliver(&ch, "ask", Some("not an address")).await;
    assert!(matches!(malformed, Delivery::Failed(_)), "{malformed:?}");
    assert!(sink.received().is_empty());

    // The channel still works for a good address afterwards.
    assert!(matches!(
        f.deliver(&ch, "ask", Some(TO)).await,
        Delivery::Sent(_)
    ));
    sink.wait_for(1).await;
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbox_without_an_address_is_skipped_and_its_own_address_is_the_fallback() {
    let Some(sink) = SmtpSink::start().await else {
        return;
    };
    let f = Fixture::new(json!({"question": "Deploy?", "kind": "bool"})).await;
    let ch = EmailChannel::new(&sink.url(), FROM).unwrap();

    let none = InboxChannels::default();
    let skipped = f.deliver_with(&ch, "ask", &f.inbox, &none).await;
    assert!(
        matches!(&skipped, Delivery::Skipped(m) if m.contains("has no email address")),
        "{skipped:?}"
    );

    let owner = InboxChannels {
        email: Some("owner@example.com".into()),
        ..InboxChannels::default()
    };
    let sent = f.deliver_with(&ch, "ask", &f.inbox, &owner).await;
    assert_eq!(sent, Delivery::Sent(Some("to owner@example.com".into())));
    let mails = sink.wait_for(1).await;
    assert_eq!(one(&mails).rcpt_tos, vec!["owner@example.com".to_string()]);
    f.srv.stop().await;
}

/// The tool inputs the chats' field tests send (tests/chat/fields.rs), for the same checks
/// on the mail.
#[path = "chat/fields.rs"]
#[allow(dead_code)]
mod fields;

/// An approval of `fields` as the default inbox asks it (no people: its mail goes to the
/// inbox's address).
fn for_the_inbox(mut body: Value) -> Value {
    let o = body.as_object_mut().unwrap();
    o.remove("approvers");
    o.remove("required");
    body
}

/// The ask mail of `body`, delivered to a real SMTP server: its fixture, text and HTML.
async fn approval_mail(sink: &SmtpSink, body: Value) -> (Fixture, String, String) {
    let f = Fixture::new(for_the_inbox(body)).await;
    let ch = EmailChannel::new(&sink.url(), FROM).unwrap();
    let before = sink.received().len();
    assert!(matches!(
        f.deliver(&ch, "ask", Some(TO)).await,
        Delivery::Sent(_)
    ));
    let mail = sink.wait_for(before + 1).await.remove(before);
    // As the person's mail program shows it: SMTP's line ends are the text's line breaks.
    let text = mail.part("text/plain").unwrap().replace("\r\n", "\n");
    let html = mail.part("text/html").unwrap().replace("\r\n", "\n");
    (f, text, html)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_mail_lists_every_field_and_offers_allow_only_when_it_shows_all() {
    let Some(sink) = SmtpSink::start().await else {
        return;
    };
    // Every field on its line, under the URL: the mail offers Allow… and Deny….
    let (f, text, html) = approval_mail(&sink, fields::puppeteer()).await;
    assert!(
        text.contains("with mcp__puppeteer__puppeteer_navigate (MCP server puppeteer)"),
        "{text}"
    );
    assert!(
        text.contains(
            "```\nhttps://example.com\n```\n\nAlso in its input:\n\n\
             ```\nlaunchOptions.executablePath: /bin/sh\n```"
        ),
        "{text}"
    );
    for part in [&text, &html] {
        assert!(
            part.contains(&format!("{}?confirm=Allow", f.web_url)),
            "{part}"
        );
        assert!(
            part.contains(&format!("{}?confirm=Deny", f.web_url)),
            "{part}"
        );
    }
    assert!(!text.contains("Allow on the page"), "{text}");
    f.srv.stop().await;

    // A body over several lines is shown only as marked code points: Allow on the page.
    let (f, text, html) = approval_mail(&sink, fields::delete()).await;
    assert!(
        text.contains("method: DELETE\nbody: {⟨U+000A⟩  \"all\": true⟨U+000A⟩}"),
        "{text}"
    );
    assert!(text.contains("Allow on the page"), "{text}");
    for part in [&text, &html] {
        assert!(!part.contains("?confirm=Allow"), "{part}");
        assert!(
            part.contains(&format!("{}?confirm=Deny", f.web_url)),
            "{part}"
        );
        assert!(links(part).contains(&f.web_url), "{part}");
    }
    f.srv.stop().await;

    // More fields than the mail's 20,000 characters: the rest are counted, Allow on the page.
    let many: serde_json::Map<String, Value> = (0..300)
        .map(|i| (format!("field{i}"), json!("x".repeat(100))))
        .collect();
    let mut input = json!({"url": "https://example.com"});
    input.as_object_mut().unwrap().extend(many);
    let body = fields::approval("mcp__puppeteer__puppeteer_navigate", input);
    let (f, text, _) = approval_mail(&sink, body).await;
    assert!(text.contains("field0: xxx"), "{text}");
    assert!(text.contains("more fields: the page shows them"), "{text}");
    assert!(text.contains("[cut: "), "{text}");
    assert!(!text.contains("?confirm=Allow"), "{text}");
    f.srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_who_chose_german_gets_the_ask_in_german_and_the_agents_words_as_written() {
    let Some(sink) = SmtpSink::start().await else {
        return;
    };
    let f = Fixture::new(json!({"question": "Which plan?", "kind": "choose",
        "options": ["Plan A", "Plan B"]}))
    .await;
    f.srv
        .set_person(
            "default",
            &sayso::service::PersonSettings {
                lang: Some("de".into()),
                ..Default::default()
            },
        )
        .await;
    let ch = EmailChannel::new(&sink.url(), FROM).unwrap();
    assert!(matches!(
        f.deliver(&ch, "ask", Some(TO)).await,
        Delivery::Sent(_)
    ));
    let mails = sink.wait_for(1).await;
    let mail = one(&mails);
    let text = mail.part("text/plain").expect("a text part");
    let html = mail.part("text/html").expect("an HTML part");
    for part in [text, html] {
        // sayso's own words in German, plurals and all; the agent's question and options
        // exactly as it wrote them.
        assert!(part.contains("Wähle eines aus:"), "{part}");
        assert!(
            part.contains("Läuft in ") && part.contains(" Minuten ab ("),
            "{part}"
        );
        assert!(part.contains("Zum Antworten öffnen"), "{part}");
        assert!(
            part.contains("Which plan?") && part.contains("Plan A"),
            "{part}"
        );
        assert!(!part.contains("Expires in"), "{part}");
    }
    assert!(html.contains("<html lang=\"de\">"), "{html}");
    f.srv.stop().await;
}
