//! An inbox's rows as both stores read them (`inbox_columns!` in each store).

use super::columns::{At, Id};
use crate::domain::inbox::{Inbox, InboxChannels, KeyGrant};

#[derive(sqlx::FromRow)]
pub(in crate::storage) struct InboxRow {
    id: Id,
    name: String,
    created_at: At,
    #[sqlx(flatten)]
    channels: ChannelsRow,
}

impl From<InboxRow> for Inbox {
    fn from(r: InboxRow) -> Self {
        Inbox {
            id: r.id.0,
            name: r.name,
            created_at: r.created_at.0,
            channels: r.channels.into(),
            key: None,
        }
    }
}

/// An inbox read through one of its keys, with the key.
#[derive(sqlx::FromRow)]
pub(in crate::storage) struct KeyedInboxRow {
    #[sqlx(flatten)]
    inbox: InboxRow,
    key_id: Id,
    key_urgent: bool,
}

impl From<KeyedInboxRow> for Inbox {
    fn from(r: KeyedInboxRow) -> Self {
        Inbox {
            key: Some(KeyGrant {
                id: r.key_id.0,
                urgent: r.key_urgent,
            }),
            ..Inbox::from(r.inbox)
        }
    }
}

/// An inbox's channel settings as both stores keep them: four nullable text columns.
#[derive(Debug, sqlx::FromRow)]
pub(in crate::storage) struct ChannelsRow {
    email: Option<String>,
    ntfy_url: Option<String>,
    ntfy_token: Option<String>,
    webhook_secret: Option<String>,
}

impl From<ChannelsRow> for InboxChannels {
    fn from(r: ChannelsRow) -> Self {
        InboxChannels {
            email: r.email,
            ntfy_url: r.ntfy_url,
            ntfy_token: r.ntfy_token,
            webhook_secret: r.webhook_secret,
            chats: Default::default(),
        }
    }
}
