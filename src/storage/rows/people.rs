//! A person's rows as both stores read them: the person, their passkeys and push
//! subscriptions; and an inbox's API keys.

use super::columns::{At, Id, Int};
use crate::domain::inbox::PushSubscription;
use crate::domain::lang::Lang;
use crate::domain::people::{ChatUsers, Person};
use crate::domain::quiet::QuietHours;
use crate::domain::webauthn::StoredPasskey;
use crate::storage::{KeyListing, StoreError};

/// The columns of a person (`person_columns!` in each store).
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct PersonRow {
    pub id: Id,
    pub inbox_id: Id,
    pub name: String,
    pub email: Option<String>,
    pub ntfy_url: Option<String>,
    pub ntfy_token: Option<String>,
    pub slack_user: Option<String>,
    pub matrix_user: Option<String>,
    pub telegram_chat: Option<String>,
    pub quiet_hours: Option<String>,
    /// The person's zone, with or without quiet hours (the column is named for the quiet
    /// hours, which were the first to have one).
    pub quiet_tz: Option<String>,
    /// Migration 0019.
    pub lang: Option<String>,
    pub created_at: At,
}

impl PersonRow {
    /// The stored form of a person's quiet hours and zone: the window, and the zone.
    pub fn quiet_of(p: &Person) -> (Option<String>, Option<String>) {
        (p.quiet.as_ref().map(|q| q.window()), p.tz.clone())
    }
}

impl TryFrom<PersonRow> for Person {
    type Error = StoreError;

    fn try_from(r: PersonRow) -> Result<Self, StoreError> {
        let quiet = match &r.quiet_hours {
            None => None,
            Some(window) => Some(
                QuietHours::parse(window, r.quiet_tz.as_deref())
                    .map_err(|e| StoreError::Other(format!("person {}: {e}", r.name)))?,
            ),
        };
        Ok(Person {
            id: r.id.0,
            inbox_id: r.inbox_id.0,
            name: r.name,
            email: r.email,
            ntfy_url: r.ntfy_url,
            ntfy_token: r.ntfy_token,
            chats: ChatUsers {
                slack: r.slack_user,
                matrix: r.matrix_user,
                telegram: r.telegram_chat,
            },
            tz: r.quiet_tz,
            quiet,
            // A language no longer spoken falls back to the browser's, never an error.
            lang: r.lang.as_deref().and_then(Lang::parse),
            created_at: r.created_at.0,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct PasskeyRow {
    credential_id: String,
    public_key: String,
    sign_count: Int,
    created_at: At,
    last_used_at: Option<At>,
    user_agent: Option<String>,
}

impl From<PasskeyRow> for StoredPasskey {
    fn from(r: PasskeyRow) -> Self {
        StoredPasskey {
            credential_id: r.credential_id,
            public_key: r.public_key,
            sign_count: u32::try_from(r.sign_count.0).unwrap_or(u32::MAX),
            added_at: r.created_at.0,
            last_used_at: r.last_used_at.map(Into::into),
            user_agent: r.user_agent,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct PushRow {
    endpoint: String,
    p256dh: String,
    auth: String,
}

impl From<PushRow> for PushSubscription {
    fn from(r: PushRow) -> Self {
        PushSubscription {
            endpoint: r.endpoint,
            p256dh: r.p256dh,
            auth: r.auth,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct KeyRow {
    id: Id,
    created_at: At,
    revoked_at: Option<At>,
    urgent: bool,
}

impl From<KeyRow> for KeyListing {
    fn from(r: KeyRow) -> Self {
        KeyListing {
            id: r.id.0,
            created_at: r.created_at.0,
            revoked_at: r.revoked_at.map(Into::into),
            urgent: r.urgent,
        }
    }
}

/// What a write that would give two of an inbox's people one name fails with.
pub(in crate::storage) fn person_name_taken(name: &str) -> String {
    format!("the inbox already has a person named {name:?}")
}
