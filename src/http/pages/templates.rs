//! The askama templates of the pages, and rendering them into responses.

use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

use super::reader::Reader;
use super::view::{Body, Control, PeopleView, ResultView};
use crate::domain::spec::Attachment;
pub use crate::render::T;
pub use crate::render::project::ProjectName;
use crate::service::ServiceError;

/// The answer page of one decision.
#[derive(Template)]
#[template(path = "answer.html")]
pub struct AnswerPage {
    pub action: String,
    pub question: String,
    pub project: Option<ProjectName>,
    pub context_html: Option<String>,
    pub image_url: Option<String>,
    pub attachments: Vec<Attachment>,
    pub expires_in: Option<String>,
    /// When it expires, in the reader's zone ("04:12 CET").
    pub expires_at: String,
    pub expires_iso: String,
    /// The controls; `None` once the decision is resolved.
    pub body: Option<Body>,
    /// Whether the page needs a "Send answer" button (bool and todo answer by their buttons).
    pub needs_submit: bool,
    pub allow_remark: bool,
    pub remark: String,
    pub errors: Vec<String>,
    pub value_error: Option<String>,
    pub other_error: Option<String>,
    pub remark_error: Option<String>,
    pub result: Option<ResultView>,
    /// Progress, the viewer's own answer, who resolved it, who answers it instead.
    pub people: PeopleView,
    /// The browser is bound to a person: the page links back to their feed.
    pub to_feed: bool,
    /// The page's language.
    pub t: T,
}

/// An error page: not found, refused, or something that went wrong.
#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub heading: String,
    pub message: String,
    pub to_feed: bool,
    pub t: T,
}

/// An inbox's feed.
#[derive(Template)]
#[template(path = "feed.html")]
pub struct FeedPage {
    pub inbox_name: String,
    /// Whose feed it is, named when the inbox has more than one person.
    pub person_name: Option<String>,
    /// "120 waiting for you", "More than 10000 waiting for you", "Nothing waiting".
    pub heading: String,
    /// The count the window's title starts with ("120", "50+"); none when nothing or an
    /// unknown number waits.
    pub title_count: Option<String>,
    /// The way through the pending list when it takes more than this page.
    pub paging: Option<FeedPaging>,
    pub projects: Vec<ProjectLink>,
    pub filter: Option<String>,
    pub all_url: String,
    /// How many decisions wait (to-dos apart).
    pub pending_count: usize,
    /// Those decisions, the approvals of one agent session that asks several at once kept
    /// together with the link to their one screen.
    pub pending: Vec<PendingEntry>,
    pub todos: Vec<FeedTodo>,
    pub history: Vec<FeedItem>,
    /// The VAPID public key the page's script subscribes with; empty hides the offer.
    pub push_key: String,
    /// Where the script posts this browser's push subscription.
    pub push_url: String,
    /// The person has a passkey: once this device has push on too, the device offers are
    /// folded away under "This device" (by `/static/feed.js`).
    pub has_passkey: bool,
    /// Always false: the feed is where the way back leads.
    pub to_feed: bool,
    /// Whether browsers treat the public URL as a secure context; when not, the page says
    /// why it offers no push and no passkeys, and what works instead (`/static/feed.js`
    /// shows the same note for an address the server does not know of).
    pub secure_context: bool,
    /// The standing allowances that count now, each with its revoke button.
    pub allowances: Vec<FeedAllowance>,
    /// The page's language.
    pub t: T,
}

/// Where a page of the feed stands in the pending list, and the links on.
pub struct FeedPaging {
    /// "The 50 that expire soonest are shown here."
    pub shown: String,
    /// The next page (its `after` cursor); none on the last.
    pub next_url: Option<String>,
    /// The first page, from a later one.
    pub first_url: Option<String>,
}

/// A standing allowance in the feed: what it lets through, until when, given by whom, and
/// the calls it let through.
pub struct FeedAllowance {
    /// "Bash allowed until 13:15 CET".
    pub headline: String,
    /// "3 calls ran without you".
    pub uses_words: String,
    /// "Every Bash call no policy rule asks about, in the project folder …, in any Claude
    /// Code session."
    pub what: String,
    pub rule: Option<String>,
    pub until_iso: String,
    pub by: Option<String>,
    /// The first calls it let through, oldest first, and how many more there are.
    pub uses: Vec<crate::render::allowance::UseLine>,
    pub more_uses: u64,
    /// Its id, which `sayso list --allowed-by` takes.
    pub id: String,
    /// Where its revoke button posts.
    pub revoke: String,
}

pub struct ProjectLink {
    /// The project's shown name; `title` its whole path, when it is one.
    pub name: String,
    pub title: Option<String>,
    pub url: String,
    pub active: bool,
}

/// A decision in the feed, linking to its page.
pub struct FeedItem {
    /// The question, or an approval's title ("Claude Code wants to run a Bash command").
    pub question: String,
    /// An approval's command (or file, or URL), visible and cut: what runs.
    pub detail: Option<String>,
    /// What that command does that deserves a second look, one plain line each.
    pub dangers: Vec<&'static str>,
    pub project: Option<ProjectName>,
    /// What kind of answer it asks for, in words: "Approval", "Yes or no", "Choice".
    pub kind: String,
    /// The status, as the item's class.
    pub status: &'static str,
    /// What was decided, in words ("Denied", "No", the option, "Skipped", "Withdrawn by the
    /// agent"); shown as written, for resolved decisions.
    pub status_words: String,
    /// Who decided and through which channel ("by ana in Telegram"), when someone did.
    pub decided_by: Option<String>,
    pub url: String,
    pub when: String,
    /// How far a decision that needs several people has come: "1 of 2 said yes: ana".
    pub progress: Option<String>,
    /// Allowed with the command edited: `detail` is the person's command, which runs, and
    /// this the one the agent asked (visible and cut).
    pub edited_from: Option<String>,
}

/// One line of the feed's pending list: a decision on its own, or the approvals of one
/// agent session gathered under the link that shows them all on one screen.
pub struct PendingEntry {
    pub session: Option<SessionLink>,
    pub items: Vec<FeedItem>,
}

/// The session page of several pending approvals of one agent session.
pub struct SessionLink {
    /// "3 calls from Claude Code, session 9f2c…".
    pub label: String,
    pub url: String,
}

/// An open to-do in the feed, done or skipped right there.
pub struct FeedTodo {
    pub question: String,
    /// The to-do's context, Markdown made safe, as its page shows it.
    pub context_html: Option<String>,
    pub project: Option<ProjectName>,
    pub action: String,
    pub when: String,
}

/// Renders a page with a status; a template that fails to render is logged and shown as a
/// plain error page.
pub fn render(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a page failed to render");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                Html("<!doctype html><title>sayso</title><p>Something went wrong; it has been logged."),
            )
                .into_response()
        }
    }
}

/// An error page with its status, for a browser with no feed to go back to; `heading` and
/// `message` are message ids.
pub fn error_page(t: T, status: StatusCode, heading: &str, message: &str) -> Response {
    error_page_for(
        &Reader {
            t,
            ..Reader::default()
        },
        status,
        heading,
        message,
    )
}

/// The page for a failure the page itself has no words for: 503 to try again, with
/// `unavailable` saying what that means for the reader, else 500, logged as `what` failing.
pub fn failure_page(t: T, e: ServiceError, unavailable: &str, what: &str) -> Response {
    match e {
        ServiceError::Unavailable => error_page(
            t,
            StatusCode::SERVICE_UNAVAILABLE,
            "err-try-again",
            unavailable,
        ),
        e => {
            tracing::error!(error = %e, "{what} failed");
            error_page(
                t,
                StatusCode::INTERNAL_SERVER_ERROR,
                "err-sorry",
                "err-logged",
            )
        }
    }
}

/// An error page with its status, linking back to the feed when the reader's browser is
/// bound to a person; `heading` and `message` are message ids.
pub fn error_page_for(
    reader: &Reader,
    status: StatusCode,
    heading: &str,
    message: &str,
) -> Response {
    error_page_text(reader, status, &reader.t.tr(heading), &reader.t.tr(message))
}

/// An error page whose message is already written (a service's refusal, in its words).
pub fn error_page_text(
    reader: &Reader,
    status: StatusCode,
    heading: &str,
    message: &str,
) -> Response {
    render(
        status,
        &ErrorPage {
            heading: heading.to_string(),
            message: message.to_string(),
            to_feed: reader.to_feed,
            t: reader.t,
        },
    )
}
