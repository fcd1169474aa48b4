//! Inboxes and their API keys.

use super::tokens::{generate_api_key, generate_webhook_secret, hash_api_key};
use super::{Service, ServiceError, now};
use crate::domain::inbox::{Inbox, InboxChannels};
use crate::storage::{KeyListing, KeyRef, KeysToRevoke};

/// Changes to where an inbox's notifications go: `None` keeps a setting, `Some("")` removes it.
#[derive(Debug, Clone, Default)]
pub struct ChannelChanges {
    pub email: Option<String>,
    pub ntfy_url: Option<String>,
    pub ntfy_token: Option<String>,
}

/// What a first start on an empty database made: shown once, never again.
#[derive(Debug)]
pub struct FirstRun {
    pub inbox: Inbox,
    /// The name of the inbox's own person: the user's, not the inbox's.
    pub person: String,
    pub api_key: String,
    pub feed_url: String,
    pub webhook_secret: String,
}

impl Service {
    /// The inbox of an API key (`Authorization: Bearer sk_…`).
    pub async fn authenticate(&self, api_key: &str) -> Result<Inbox, ServiceError> {
        check_api_key_shape(api_key)?;
        self.store()
            .inbox_for_key(&hash_api_key(api_key))
            .await?
            .ok_or(ServiceError::Unauthorized)
    }

    /// Makes an inbox with a new webhook signing secret; its name must be new.
    pub async fn create_inbox(
        &self,
        name: &str,
        email: Option<&str>,
    ) -> Result<Inbox, ServiceError> {
        check_inbox_name(name)?;
        if let Some(email) = email {
            check_email(email)?;
        }
        let inbox = match self.store().create_inbox(name, email, now()).await {
            Err(crate::storage::StoreError::Conflict(_)) => {
                return Err(ServiceError::Conflict(format!(
                    "an inbox named {name:?} already exists"
                )));
            }
            other => other?,
        };
        let channels = InboxChannels {
            email: email.map(str::to_string),
            webhook_secret: Some(generate_webhook_secret()),
            ..InboxChannels::default()
        };
        self.store().set_inbox_channels(inbox.id, &channels).await?;
        Ok(inbox)
    }

    /// Changes where the named inbox's notifications go and returns the result.
    pub async fn set_inbox_channels(
        &self,
        name: &str,
        changes: &ChannelChanges,
    ) -> Result<InboxChannels, ServiceError> {
        let inbox = self
            .store()
            .inbox_by_name(name)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let mut channels = self.store().inbox_channels(inbox.id).await?;
        let apply = |current: &mut Option<String>, change: &Option<String>| {
            if let Some(v) = change {
                *current = (!v.trim().is_empty()).then(|| v.trim().to_string());
            }
        };
        apply(&mut channels.email, &changes.email);
        apply(&mut channels.ntfy_url, &changes.ntfy_url);
        apply(&mut channels.ntfy_token, &changes.ntfy_token);
        if let Some(email) = &channels.email {
            check_email(email)?;
        }
        if let Some(url) = &channels.ntfy_url {
            check_ntfy_url(url)?;
        }
        if channels.webhook_secret.is_none() {
            channels.webhook_secret = Some(generate_webhook_secret());
        }
        self.store().set_inbox_channels(inbox.id, &channels).await?;
        Ok(channels)
    }

    /// Makes a new API key for the named inbox and returns it; only its hash is kept. It may
    /// not ask urgent questions (`create_api_key_with`).
    pub async fn create_api_key(&self, inbox_name: &str) -> Result<String, ServiceError> {
        Ok(self.create_api_key_with(inbox_name, false).await?.0)
    }

    /// Makes a new API key for the named inbox, allowed `urgent` questions or not, and
    /// returns it with its id; only its hash is kept.
    pub async fn create_api_key_with(
        &self,
        inbox_name: &str,
        urgent: bool,
    ) -> Result<(String, uuid::Uuid), ServiceError> {
        let inbox = self
            .store()
            .inbox_by_name(inbox_name)
            .await?
            .ok_or(ServiceError::NotFound)?;
        let key = generate_api_key();
        let id = self
            .store()
            .create_api_key(inbox.id, &hash_api_key(&key), urgent, now())
            .await?;
        Ok((key, id))
    }

    /// The named inbox's API keys, revoked ones too, oldest first (never the keys
    /// themselves: only their hashes are kept).
    pub async fn api_keys(&self, inbox_name: &str) -> Result<Vec<KeyListing>, ServiceError> {
        let inbox = self
            .store()
            .inbox_by_name(inbox_name)
            .await?
            .ok_or(ServiceError::NotFound)?;
        Ok(self.store().api_keys(inbox.id).await?)
    }

    /// Allows a live API key `urgent` questions, or stops allowing them; the key is named by
    /// its id (`sayso key list`) or given itself. False if no live key matches.
    pub async fn set_key_urgent(&self, key: &str, urgent: bool) -> Result<bool, ServiceError> {
        let key = key.trim();
        let hash;
        let which = match uuid::Uuid::parse_str(key) {
            Ok(id) => KeyRef::Id(id),
            Err(_) => {
                hash = hash_api_key(key);
                KeyRef::Hash(&hash)
            }
        };
        Ok(self.store().set_key_urgent(which, urgent).await?)
    }

    /// Revokes an API key, given the key itself; it stops working at once, on every replica,
    /// because every request looks its key up. False if no live key matches.
    pub async fn revoke_api_key(&self, api_key: &str) -> Result<bool, ServiceError> {
        let hash = hash_api_key(api_key.trim());
        let n = self
            .store()
            .revoke_api_keys(KeysToRevoke::Hash(&hash), now())
            .await?;
        Ok(n > 0)
    }

    /// Revokes every API key of the named inbox and returns how many were live.
    pub async fn revoke_inbox_keys(&self, inbox_name: &str) -> Result<u64, ServiceError> {
        let inbox = self
            .store()
            .inbox_by_name(inbox_name)
            .await?
            .ok_or(ServiceError::NotFound)?;
        Ok(self
            .store()
            .revoke_api_keys(KeysToRevoke::AllOf(inbox.id), now())
            .await?)
    }

    /// The feed link of an inbox.
    pub fn feed_url(&self, inbox: &Inbox) -> String {
        format!(
            "{}/inbox/{}",
            self.settings().public_url,
            self.tokens().feed_token(inbox.id)
        )
    }

    /// Whether the database has no inbox yet: the next `first_run` would make one.
    pub async fn first_run_pending(&self) -> Result<bool, ServiceError> {
        Ok(self.store().count_inboxes().await? == 0)
    }

    /// On an empty database, makes the inbox `default` with one key, its own person named
    /// `person` (the user, so that messages say "allowed by ana", never "by default"). When
    /// several replicas start at once, only the one whose insert wins reports a first run.
    pub async fn first_run(&self, person: &str) -> Result<Option<FirstRun>, ServiceError> {
        crate::domain::people::check_name(person)
            .map_err(|m| ServiceError::invalid("person", m))?;
        if self.store().count_inboxes().await? > 0 {
            return Ok(None);
        }
        let inbox = match self.create_inbox("default", None).await {
            Ok(inbox) => inbox,
            Err(ServiceError::Conflict(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        // The own person has the inbox's id, and is made with the inbox's name.
        if person != inbox.name {
            self.store().rename_person(inbox.id, person).await?;
        }
        let api_key = self.create_api_key(&inbox.name).await?;
        let feed_url = self.feed_url(&inbox);
        let webhook_secret = self
            .store()
            .inbox_channels(inbox.id)
            .await?
            .webhook_secret
            .unwrap_or_default();
        Ok(Some(FirstRun {
            inbox,
            person: person.to_string(),
            api_key,
            feed_url,
            webhook_secret,
        }))
    }
}

/// Refuses, without asking the database, what cannot be an API key.
pub(super) fn check_api_key_shape(api_key: &str) -> Result<(), ServiceError> {
    if api_key.starts_with("sk_") && api_key.len() <= 200 {
        Ok(())
    } else {
        Err(ServiceError::Unauthorized)
    }
}

fn check_inbox_name(name: &str) -> Result<(), ServiceError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid(
            "name",
            "an inbox name is 1–64 characters of a–z, 0–9, '-' and '_'",
        ))
    }
}

pub(super) fn check_email(email: &str) -> Result<(), ServiceError> {
    let ok = email.len() <= 254
        && !email.contains(char::is_whitespace)
        && email
            .split_once('@')
            .is_some_and(|(l, d)| !l.is_empty() && d.contains('.') && !d.contains('@'));
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid(
            "email",
            format!("{email:?} is not an email address"),
        ))
    }
}

/// Refuses what is not an ntfy topic URL (http or https, with a topic in its path).
pub(super) fn check_ntfy_url(url: &str) -> Result<(), ServiceError> {
    let ok = url::Url::parse(url)
        .map(|u| matches!(u.scheme(), "http" | "https") && u.path().len() > 1)
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid(
            "ntfy_url",
            format!("{url:?} is not an ntfy topic URL like https://ntfy.sh/my-topic"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbox_names_are_simple_slugs() {
        assert!(check_inbox_name("default").is_ok());
        assert!(check_inbox_name("team-ops_2").is_ok());
        for bad in ["", "Default", "a b", "ü", &"a".repeat(65)] {
            assert!(check_inbox_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn emails_need_a_local_part_and_a_domain() {
        assert!(check_email("ops@example.com").is_ok());
        for bad in ["ops", "@example.com", "ops@example", "a b@example.com"] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
    }
}
