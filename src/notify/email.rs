//! Email over SMTP (docs/NOTIFICATIONS.md): one thread per decision. The ask carries the question,
//! its context and a button that opens the answer page (never a link that answers); the
//! reminder and the note that it was resolved reply to it.
//!
//! Message-IDs are derived from the decision, so a delivery repeated after a crash carries
//! the same id and the receiving side can drop the copy.

use crate::render::project::short_project;
use std::time::Duration;

use askama::Template;
use async_trait::async_trait;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use time::OffsetDateTime;

use crate::courier::{Courier, Delivering, Delivery, Notice};
use crate::domain::Decision;
use crate::domain::answer_text::answer_text;
use crate::domain::approval::{ALLOW, DENY};
use crate::domain::outbox::{Channel, Purpose};
use crate::domain::spec::{ChoiceOption, FieldInput, KindSpec};
use crate::render::html::escape;
use crate::render::{T, Zone, heading, render_markdown, time_left, what_runs};

/// How long one SMTP conversation may take before the attempt is retried later.
const SMTP_TIMEOUT: Duration = Duration::from_secs(10);

/// Subjects longer than this many characters are cut (at a word where possible).
const SUBJECT_QUESTION_CHARS: usize = 78;
/// The most characters of an approval's command (or file, diff, input) in an ask's body.
const MAIL_BODY_CHARS: usize = 20_000;
/// What an approval's mail says when it cannot show all that runs, in place of its Allow… link.
/// The most characters of an approval's command in a reminder's or a note's heading.
const HEADLINE_CHARS: usize = 200;

/// Sends decisions' mails through one SMTP relay.
pub struct EmailChannel {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl EmailChannel {
    /// `smtp_url`: `smtp://host:port` (plain, for local relays), `smtp://host?tls=required`
    /// (STARTTLS), `smtps://host` (TLS from the start); `user:password@` for authentication.
    /// `mail_from`: the From address, `sayso@example.com` or `sayso <sayso@example.com>`.
    /// Call it inside a Tokio runtime: the connection pool starts a task.
    pub fn new(smtp_url: &str, mail_from: &str) -> Result<Self, String> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err("the email channel must be created inside a Tokio runtime".into());
        }
        let url =
            url::Url::parse(smtp_url).map_err(|e| format!("the SMTP URL is not a URL: {e}"))?;
        if !matches!(url.scheme(), "smtp" | "smtps") {
            return Err(format!(
                "the SMTP URL must start with smtp:// or smtps://, not {}://",
                url.scheme()
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("the SMTP URL names no host".into());
        }
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(|e| format!("the SMTP URL is not usable: {e}"))?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        let from = mail_from
            .parse::<Mailbox>()
            .map_err(|e| format!("the From address {mail_from:?} is not valid: {e}"))?;
        Ok(EmailChannel { transport, from })
    }

    /// Sends `mail` to `address`, given as it was written.
    async fn send(&self, mail: Mail, to: Mailbox, address: &str) -> Delivery {
        let message = match mail.into_message(self.from.clone(), to) {
            Ok(m) => m,
            Err(e) => return Delivery::Failed(format!("the mail could not be built: {e}")),
        };
        match self.transport.send(message).await {
            Ok(_) => Delivery::Sent(Some(format!("to {address}"))),
            Err(e) => classify(&e),
        }
    }
}

/// The address as a mailbox, or the failure of a delivery to it.
fn mailbox(address: &str) -> Result<Mailbox, Delivery> {
    address
        .parse::<Mailbox>()
        .map_err(|e| Delivery::Failed(format!("the address {address:?} is not valid: {e}")))
}

#[async_trait]
impl Courier for EmailChannel {
    fn channel(&self) -> Channel {
        Channel::Email
    }

    async fn deliver(&self, d: &Delivering<'_>) -> Delivery {
        let Some(address) = recipient(d) else {
            return Delivery::Skipped(format!("inbox {} has no email address", d.inbox.name));
        };
        let to = match mailbox(address) {
            Ok(to) => to,
            Err(failed) => return failed,
        };
        let now = OffsetDateTime::now_utc();
        let mail = match compose_gathered(
            &d.t(),
            d.message.purpose,
            d.decision,
            d.web_url,
            d.public_url,
            (d.zone, now),
            (d.gathered(), d.waiting()),
        ) {
            Composed::Mail(mail) => mail,
            Composed::Nothing(why) => return Delivery::Skipped(why),
            Composed::Broken(why) => return Delivery::Failed(why),
        };
        self.send(mail, to, address).await
    }

    /// A notice to the person's own address, a mail of its own (no decision's thread).
    async fn notify_person(&self, n: &Notice<'_>) -> Delivery {
        let Some(address) = n
            .person
            .email
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
        else {
            return Delivery::Skipped(format!("{} has no email address", n.person.name));
        };
        let to = match mailbox(address) {
            Ok(to) => to,
            Err(failed) => return failed,
        };
        let text = format!("{}\n\n{}\n", n.body, n.url);
        // Escaped: the notice's body carries a User-Agent, which anyone sets.
        let html = format!(
            "<p>{}</p>\n<p><a href=\"{url}\">{url}</a></p>\n",
            escape(&n.body),
            url = escape(&n.url)
        );
        let mail = Mail {
            subject: format!("[sayso] {}", n.title),
            message_id: format!(
                "<notice-{}@{}>",
                n.message.id,
                message_id_host(n.outbox.public_url())
            ),
            in_reply_to: None,
            text,
            html,
        };
        self.send(mail, to, address).await
    }
}

/// The inbox's notification address.
fn recipient<'a>(d: &'a Delivering<'_>) -> Option<&'a str> {
    d.channels
        .email
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
}

/// A refusal (5xx) will not change by trying again; anything else might.
fn classify(e: &smtp::Error) -> Delivery {
    let detail = error_chain(e);
    if e.is_permanent() {
        Delivery::Failed(format!("the mail server refused the mail: {detail}"))
    } else if e.is_timeout() {
        Delivery::Retry(format!("the mail server did not answer in time: {detail}"))
    } else {
        Delivery::Retry(format!("the mail could not be sent: {detail}"))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// What to send for a message, before the addresses are known.
enum Composed {
    Mail(Mail),
    /// Nothing to send, and that is fine.
    Nothing(String),
    /// The message cannot be rendered.
    Broken(String),
}

/// One mail of a decision's thread.
#[derive(Debug)]
struct Mail {
    subject: String,
    message_id: String,
    /// The ask's Message-ID, for the mails that reply to it.
    in_reply_to: Option<String>,
    text: String,
    html: String,
}

impl Mail {
    fn into_message(self, from: Mailbox, to: Mailbox) -> Result<Message, lettre::error::Error> {
        let mut b = Message::builder()
            .from(from)
            .to(to)
            .subject(self.subject)
            .message_id(Some(self.message_id))
            // Keeps out-of-office replies away from the sending address.
            .raw_header(HeaderValue::new(
                HeaderName::new_from_ascii_str("Auto-Submitted"),
                "auto-generated".into(),
            ));
        if let Some(parent) = self.in_reply_to {
            b = b.in_reply_to(parent.clone()).references(parent);
        }
        b.multipart(MultiPart::alternative_plain_html(self.text, self.html))
    }
}

/// The same, its times in `zone`, standing for `gathered` more approvals of the same agent
/// session and `waiting` more asks the person's notification budget held (people.rs).
fn compose_gathered(
    t: &T,
    purpose: Purpose,
    decision: &Decision,
    web_url: &str,
    public_url: &str,
    (zone, now): (&Zone, OffsetDateTime),
    (gathered, waiting): (u64, u64),
) -> Composed {
    let host = message_id_host(public_url);
    let thread = thread_id(decision, &host, "");
    let subject = format!(
        "[sayso] {}",
        subject_question(&what_runs::headline(
            t,
            &decision.spec,
            SUBJECT_QUESTION_CHARS,
        ))
    );
    let rendered = match purpose {
        Purpose::Ask | Purpose::Reminder if !decision.is_open_at(now) => {
            return Composed::Nothing(format!(
                "the decision is no longer open ({})",
                heading(&T::default(), decision, now).to_lowercase()
            ));
        }
        Purpose::Ask => {
            let mut mail = AskMail::new(t, decision, web_url, zone, now);
            let mut lines = Vec::new();
            if gathered > 0 {
                lines.push(t.tr1("notify-gathered", "count", gathered));
            }
            if waiting > 0 {
                lines.push(format!(
                    "{} {}",
                    t.tr1("notify-waiting", "count", waiting),
                    super::people::feed_link(public_url)
                ));
            }
            if !lines.is_empty() {
                mail.gathered = Some(lines.join(" "));
            }
            render_pair(AskText { m: &mail, t: *t }, AskHtml { m: &mail, t: *t }).map(
                |(text, html)| Mail {
                    subject,
                    message_id: thread,
                    in_reply_to: None,
                    text,
                    html,
                },
            )
        }
        Purpose::Reminder => {
            let mail = ReminderMail {
                question: what_runs::headline(t, &decision.spec, HEADLINE_CHARS),
                project: decision.spec.project.as_deref().map(short_project),
                expires_in: time_left(t, decision.expires_at, now),
                expires_at: zone.date_time(decision.expires_at),
                web_url: web_url.to_owned(),
            };
            render_pair(
                ReminderText { m: &mail, t: *t },
                ReminderHtml { m: &mail, t: *t },
            )
            .map(|(text, html)| Mail {
                subject: match waiting {
                    0 => t.tr1("mail-reminder-title", "question", subject),
                    n => t.tr2(
                        "mail-reminder-subject-more",
                        "question",
                        subject,
                        "count",
                        n,
                    ),
                },
                message_id: thread_id(decision, &host, "-reminder"),
                in_reply_to: Some(thread),
                text,
                html,
            })
        }
        Purpose::Escalate => return Composed::Nothing(crate::courier::ESCALATE_SKIPPED.into()),
        Purpose::PasskeyAdded => return Composed::Nothing(crate::courier::NOTICE_SKIPPED.into()),
        Purpose::Progress => return Composed::Nothing(crate::courier::PROGRESS_SKIPPED.into()),
        Purpose::Resolved => {
            let mail = ResolvedMail {
                question: what_runs::headline(t, &decision.spec, HEADLINE_CHARS),
                heading: heading(t, decision, now),
                when: zone.date_time(decision.resolved_at.unwrap_or(decision.expires_at.min(now))),
                sentence: answer_text(decision),
                web_url: web_url.to_owned(),
            };
            render_pair(
                ResolvedText { m: &mail, t: *t },
                ResolvedHtml { m: &mail, t: *t },
            )
            .map(|(text, html)| Mail {
                subject: format!("Re: {subject}"),
                message_id: thread_id(decision, &host, "-resolved"),
                in_reply_to: Some(thread),
                text,
                html,
            })
        }
    };
    match rendered {
        Ok(mail) => Composed::Mail(mail),
        Err(e) => Composed::Broken(format!("the mail could not be rendered: {e}")),
    }
}

fn render_pair(text: impl Template, html: impl Template) -> askama::Result<(String, String)> {
    Ok((text.render()?, html.render()?))
}

/// `<decision-{id}{suffix}@{host}>`: the same for every attempt at the same mail.
fn thread_id(decision: &Decision, host: &str, suffix: &str) -> String {
    format!("<decision-{}{suffix}@{host}>", decision.id)
}

/// The public URL's host, the right-hand side of the Message-IDs.
fn message_id_host(public_url: &str) -> String {
    url::Url::parse(public_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "sayso.invalid".to_owned())
}

/// The question on one line, cut at a word boundary when it is long.
fn subject_question(question: &str) -> String {
    let line = question.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SUBJECT_QUESTION_CHARS {
        return line;
    }
    let cut: String = line.chars().take(SUBJECT_QUESTION_CHARS - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > SUBJECT_QUESTION_CHARS / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end_matches([' ', ',', ';', ':', '-']))
}

/// An option as the ask lists it.
struct OptionLine {
    label: String,
    description: Option<String>,
}

impl From<&ChoiceOption> for OptionLine {
    fn from(o: &ChoiceOption) -> Self {
        OptionLine {
            label: o.label.clone(),
            description: o.description.clone(),
        }
    }
}

/// What the ask says, shared by its text and HTML parts.
struct AskMail {
    question: String,
    project: Option<String>,
    /// The context as sanitised HTML, for the HTML part.
    context_html: Option<String>,
    /// The context's Markdown source, for the text part.
    context_text: Option<String>,
    /// What kind of answer is wanted, in a few words.
    wanted: String,
    options: Vec<OptionLine>,
    /// The questions of a form, by their labels.
    fields: Vec<String>,
    expires_in: String,
    expires_at: String,
    web_url: String,
    /// A tool approval's answers, each a link to the page asking to confirm it.
    confirm_links: Vec<(String, String)>,
    /// How many more approvals of the same agent session this mail stands for, in words.
    gathered: Option<String>,
}

impl AskMail {
    fn new(t: &T, decision: &Decision, web_url: &str, zone: &Zone, now: OffsetDateTime) -> Self {
        let spec = &decision.spec;
        // A tool approval says what runs, built from the approval itself, never from the
        // asker's question and context.
        let approval_md = spec.approval.as_ref().map(|a| {
            let (mut md, whole) = what_runs::mail_md(t, a, MAIL_BODY_CHARS);
            if !whole {
                md.push_str(&t.tr("mail-allow-on-the-page"));
            }
            (md, whole)
        });
        let context = match &approval_md {
            Some((md, _)) => Some(md.as_str()),
            None => spec.context_md.as_deref(),
        }
        .map(str::trim)
        .filter(|c| !c.is_empty());
        let (wanted, options, fields) = match &spec.body {
            KindSpec::Bool {
                yes_label,
                no_label,
            } => (
                t.tr2("mail-wanted-bool", "yes", yes_label, "no", no_label),
                Vec::new(),
                Vec::new(),
            ),
            KindSpec::Choose { options, multi, .. } => (
                t.tr(if *multi {
                    "mail-wanted-any"
                } else {
                    "mail-wanted-one"
                }),
                options.iter().map(OptionLine::from).collect(),
                Vec::new(),
            ),
            KindSpec::Text { .. } => (t.tr("mail-wanted-text"), Vec::new(), Vec::new()),
            KindSpec::Form(form) => (
                t.tr1("mail-wanted-form", "count", form.fields.len()),
                Vec::new(),
                form.fields
                    .iter()
                    .map(|f| field_label(&f.title, &f.name, &f.input))
                    .collect(),
            ),
            KindSpec::Todo => (t.tr("mail-wanted-todo"), Vec::new(), Vec::new()),
        };
        AskMail {
            question: match &spec.approval {
                Some(a) => what_runs::title(t, a),
                None => spec.question.clone(),
            },
            project: spec.project.as_deref().map(short_project),
            context_html: context.map(render_markdown),
            context_text: context.map(str::to_owned),
            wanted,
            options,
            fields,
            expires_in: time_left(t, decision.expires_at, now),
            expires_at: zone.date_time(decision.expires_at),
            web_url: web_url.to_owned(),
            gathered: None,
            // Allow… only when the mail shows all that runs; otherwise the page, which does,
            // is where it is given.
            confirm_links: match &approval_md {
                Some((_, whole)) => [ALLOW, DENY]
                    .iter()
                    .filter(|a| *whole || **a != ALLOW)
                    .map(|a| (a.to_string(), format!("{web_url}?confirm={a}")))
                    .collect(),
                None => Vec::new(),
            },
        }
    }
}

fn field_label(title: &Option<String>, name: &str, input: &FieldInput) -> String {
    let label = title.as_deref().unwrap_or(name);
    match input {
        FieldInput::Choice { options, .. } | FieldInput::MultiChoice { options, .. } => {
            let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
            format!("{label} ({})", labels.join(" / "))
        }
        _ => label.to_owned(),
    }
}

#[derive(Template)]
#[template(path = "mail/ask.txt")]
struct AskText<'a> {
    m: &'a AskMail,
    t: T,
}

#[derive(Template)]
#[template(path = "mail/ask.html")]
struct AskHtml<'a> {
    m: &'a AskMail,
    t: T,
}

/// What the reminder says.
struct ReminderMail {
    question: String,
    project: Option<String>,
    expires_in: String,
    expires_at: String,
    web_url: String,
}

#[derive(Template)]
#[template(path = "mail/reminder.txt")]
struct ReminderText<'a> {
    m: &'a ReminderMail,
    t: T,
}

#[derive(Template)]
#[template(path = "mail/reminder.html")]
struct ReminderHtml<'a> {
    m: &'a ReminderMail,
    t: T,
}

/// What the note after the resolution says.
struct ResolvedMail {
    question: String,
    /// `Answered`, `Declined`, `Expired`, `Cancelled`.
    heading: String,
    when: String,
    /// The `answer_text` sentence.
    sentence: String,
    web_url: String,
}

#[derive(Template)]
#[template(path = "mail/resolved.txt")]
struct ResolvedText<'a> {
    m: &'a ResolvedMail,
    t: T,
}

#[derive(Template)]
#[template(path = "mail/resolved.html")]
struct ResolvedHtml<'a> {
    m: &'a ResolvedMail,
    t: T,
}

#[cfg(test)]
mod tests;
