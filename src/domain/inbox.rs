//! An inbox, where its notifications go, and what it has used.

use time::OffsetDateTime;
use uuid::Uuid;

/// A person's (or a team's) place, which owns API keys and decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbox {
    pub id: Uuid,
    pub name: String,
    pub created_at: OffsetDateTime,
    /// Where its notifications go, as of when the inbox was read. Read with the inbox (and
    /// with its API key) so a create needs no second query for them.
    pub channels: InboxChannels,
    /// The API key it was read through (`Store::inbox_for_key`), with what the operator
    /// allowed that key; `None` when read by name or id, as the server's own commands do.
    pub key: Option<KeyGrant>,
}

/// An API key as a request presents it: which key, and what the operator allowed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyGrant {
    pub id: Uuid,
    /// Whether its questions may be `urgent` (ring through quiet hours).
    pub urgent: bool,
}

/// Where an inbox's notifications go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InboxChannels {
    pub email: Option<String>,
    /// An ntfy topic URL, e.g. `https://ntfy.sh/my-topic`.
    pub ntfy_url: Option<String>,
    /// The access token of that topic, if it needs one.
    pub ntfy_token: Option<String>,
    /// The inbox's webhook signing secret, `whsec_…`.
    pub webhook_secret: Option<String>,
    /// The person's users on the chats (a person's own; an inbox's row has none).
    pub chats: crate::domain::people::ChatUsers,
}

/// A browser's Web Push subscription, as its `PushSubscription.toJSON()` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushSubscription {
    pub endpoint: String,
    /// The browser's P-256 public key, base64url.
    pub p256dh: String,
    /// The 16-byte auth secret, base64url.
    pub auth: String,
}

/// Actions used in a span of days, and the creates among them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct UsageCount {
    pub actions: i64,
    pub creates: i64,
}

/// An inbox's usage on one UTC day and in that day's month so far, with its quota.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub today: UsageCount,
    pub month: UsageCount,
    /// Actions allowed per UTC day; `None` for no limit.
    pub daily_quota: Option<i64>,
}
