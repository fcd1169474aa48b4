//! The people of an inbox as `sayso person` manages them: adding one with their own feed
//! link, listing them, changing their channels, zone and quiet hours, removing them.

use uuid::Uuid;

use super::inboxes::{check_email, check_ntfy_url};
use super::{Service, ServiceError, now};
use crate::domain::inbox::Inbox;
use crate::domain::lang::Lang;
use crate::domain::people::{self, Person};
use crate::domain::quiet::QuietHours;
use crate::domain::time_zone::canonical_zone;
use crate::storage::StoreError;

/// A person's channels and quiet hours as given to `add_person` and `set_person`: `None`
/// leaves a setting as it is (unset, for a new person), `Some("")` removes it.
#[derive(Debug, Clone, Default)]
pub struct PersonSettings {
    pub email: Option<String>,
    /// An ntfy topic URL of their own.
    pub ntfy_url: Option<String>,
    pub ntfy_token: Option<String>,
    /// Their Slack user id (`U…`), Matrix user (`@name:server`) and Telegram user id
    /// (digits): docs/CHANNELS.md.
    pub slack: Option<String>,
    pub matrix: Option<String>,
    pub telegram: Option<String>,
    /// Quiet hours, "22:00-07:00".
    pub quiet: Option<String>,
    /// Their time zone (IANA, "Europe/Berlin"): the times they are shown, and their quiet
    /// hours, are in it; `Some("")` makes it UTC again.
    pub tz: Option<String>,
    /// The language sayso speaks to them in ("de"); `Some("")` leaves it to their browser.
    pub lang: Option<String>,
}

impl Service {
    /// Adds a person to the named inbox and returns them with their own feed link.
    /// `NotFound` for an unknown inbox, `Conflict` when the inbox has a person of that name.
    pub async fn add_person(
        &self,
        inbox_name: &str,
        name: &str,
        settings: &PersonSettings,
    ) -> Result<(Person, String), ServiceError> {
        people::check_name(name).map_err(|m| ServiceError::invalid("name", m))?;
        let inbox = self.inbox_named(inbox_name).await?;
        let mut person = Person::named(Uuid::now_v7(), inbox.id, name, now());
        apply(&mut person, settings)?;
        self.check_chat_users_free(&person).await?;
        match self.store().add_person(&person).await {
            Err(StoreError::Conflict(_)) => {
                return Err(ServiceError::Conflict(format!(
                    "the inbox {:?} already has a person named {name:?}",
                    inbox.name
                )));
            }
            other => other?,
        }
        tracing::info!(inbox = %inbox.name, person = %person.name, "a person was added");
        let link = self.person_link(&person);
        Ok((person, link))
    }

    /// The people of the named inbox, oldest first (the inbox's own person among them).
    pub async fn list_people(&self, inbox_name: &str) -> Result<Vec<Person>, ServiceError> {
        let inbox = self.inbox_named(inbox_name).await?;
        Ok(self.store().people(inbox.id).await?)
    }

    /// Changes a person's channels and quiet hours (see [`PersonSettings`]) and returns
    /// them as they are now. For the inbox's own person these are the inbox's channels too.
    pub async fn set_person(
        &self,
        inbox_name: &str,
        name: &str,
        changes: &PersonSettings,
    ) -> Result<Person, ServiceError> {
        let (inbox, mut person) = self.person_named(inbox_name, name).await?;
        apply(&mut person, changes)?;
        self.check_chat_users_free(&person).await?;
        match self.store().update_person(&person).await {
            Err(StoreError::NotFound) => return Err(no_such_person(&inbox, name)),
            other => other?,
        }
        Ok(person)
    }

    /// Sets the zone of the named inbox's own person (`sayso inbox set --tz`): the same as
    /// `set_person` with only `tz`.
    pub async fn set_inbox_zone(&self, inbox_name: &str, tz: &str) -> Result<Person, ServiceError> {
        let inbox = self.inbox_named(inbox_name).await?;
        let own = self
            .store()
            .people(inbox.id)
            .await?
            .into_iter()
            .find(Person::is_inbox_own)
            .ok_or(ServiceError::NotFound)?;
        let changes = PersonSettings {
            tz: Some(tz.to_string()),
            ..PersonSettings::default()
        };
        self.set_person(inbox_name, &own.name, &changes).await
    }

    /// Refuses a chat user that is already another person's of the same inbox: an answer
    /// from that user must count as one person. (The database's unique indexes hold it too,
    /// without saying whose the user is.)
    async fn check_chat_users_free(&self, person: &Person) -> Result<(), ServiceError> {
        use crate::domain::outbox::Channel;
        let others = self.store().people(person.inbox_id).await?;
        for channel in [Channel::Slack, Channel::Matrix, Channel::Telegram] {
            let Some(user) = person.chats.on(channel) else {
                continue;
            };
            if let Some(other) = others
                .iter()
                .find(|o| o.id != person.id && o.chats.on(channel) == Some(user))
            {
                return Err(ServiceError::Conflict(format!(
                    "the {channel} user {user} is already {}'s in this inbox: an answer from                      them must count as one person",
                    other.name
                )));
            }
        }
        Ok(())
    }

    /// Gives a person of the named inbox a new name (same rules as `add_person`); their
    /// links, devices and channels stay theirs. Answers given before keep the name they were
    /// given under.
    pub async fn rename_person(
        &self,
        inbox_name: &str,
        name: &str,
        new_name: &str,
    ) -> Result<Person, ServiceError> {
        people::check_name(new_name).map_err(|m| ServiceError::invalid("new_name", m))?;
        let (inbox, mut person) = self.person_named(inbox_name, name).await?;
        match self.store().rename_person(person.id, new_name).await {
            Err(StoreError::Conflict(_)) => {
                return Err(ServiceError::Conflict(format!(
                    "the inbox {:?} already has a person named {new_name:?}",
                    inbox.name
                )));
            }
            Ok(false) => return Err(no_such_person(&inbox, name)),
            other => other?,
        };
        tracing::info!(inbox = %inbox.name, person = %new_name, was = %name, "a person was renamed");
        person.name = new_name.to_string();
        Ok(person)
    }

    /// Removes a person with their devices and push subscriptions: their feed link stops
    /// opening. An inbox keeps at least one person.
    pub async fn remove_person(&self, inbox_name: &str, name: &str) -> Result<(), ServiceError> {
        let inbox = self.inbox_named(inbox_name).await?;
        let everyone = self.store().people(inbox.id).await?;
        let person = everyone
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| no_such_person(&inbox, name))?;
        // Checked before the delete, not with it: two admins removing the last two people at
        // the same moment could both pass, which an admin command may live with.
        if everyone.len() <= 1 {
            return Err(ServiceError::Conflict(format!(
                "an inbox needs at least one person: {name:?} is the last of the inbox {:?}",
                inbox.name
            )));
        }
        if !self.store().remove_person(person.id).await? {
            return Err(no_such_person(&inbox, name));
        }
        tracing::info!(inbox = %inbox.name, person = %name, "a person was removed");
        Ok(())
    }

    /// The feed link of a person of the named inbox.
    pub async fn person_feed_url(
        &self,
        inbox_name: &str,
        name: &str,
    ) -> Result<String, ServiceError> {
        let (_, person) = self.person_named(inbox_name, name).await?;
        Ok(self.person_link(&person))
    }

    /// A person's own feed link; the inbox's own person's is the inbox's (`feed_url`).
    pub fn person_link(&self, person: &Person) -> String {
        format!(
            "{}/inbox/{}",
            self.settings().public_url,
            self.tokens().feed_token(person.id)
        )
    }

    async fn inbox_named(&self, name: &str) -> Result<Inbox, ServiceError> {
        self.store()
            .inbox_by_name(name)
            .await?
            .ok_or(ServiceError::NotFound)
    }

    /// A person by inbox and name: `NotFound` for an unknown inbox, a validation error
    /// saying so for an unknown person.
    /// The person `name` of the inbox `inbox_name` (`NotFound` for an unknown inbox, a
    /// `Validation` naming the person otherwise).
    pub async fn named_person(&self, inbox_name: &str, name: &str) -> Result<Person, ServiceError> {
        Ok(self.person_named(inbox_name, name).await?.1)
    }

    pub(super) async fn person_named(
        &self,
        inbox_name: &str,
        name: &str,
    ) -> Result<(Inbox, Person), ServiceError> {
        let inbox = self.inbox_named(inbox_name).await?;
        let person = self
            .store()
            .people(inbox.id)
            .await?
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| no_such_person(&inbox, name))?;
        Ok((inbox, person))
    }
}

fn no_such_person(inbox: &Inbox, name: &str) -> ServiceError {
    ServiceError::invalid(
        "name",
        format!("the inbox {:?} has no person named {name:?}", inbox.name),
    )
}

/// Applies `changes` to `person`, checking each value given.
fn apply(person: &mut Person, changes: &PersonSettings) -> Result<(), ServiceError> {
    fn given(change: &Option<String>) -> Option<&str> {
        change.as_deref().map(str::trim)
    }
    let set = |current: &mut Option<String>, value: Option<&str>| {
        if let Some(v) = value {
            *current = (!v.is_empty()).then(|| v.to_string());
        }
    };
    if let Some(email) = given(&changes.email).filter(|e| !e.is_empty()) {
        check_email(email)?;
    }
    if let Some(url) = given(&changes.ntfy_url).filter(|u| !u.is_empty()) {
        check_ntfy_url(url)?;
    }
    set(&mut person.email, given(&changes.email));
    set(&mut person.ntfy_url, given(&changes.ntfy_url));
    set(&mut person.ntfy_token, given(&changes.ntfy_token));
    for (field, value, check) in [
        (
            "slack",
            given(&changes.slack),
            people::check_slack_user as fn(&str) -> _,
        ),
        ("matrix", given(&changes.matrix), people::check_matrix_user),
        (
            "telegram",
            given(&changes.telegram),
            people::check_telegram_user,
        ),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            check(v).map_err(|m| ServiceError::invalid(field, m))?;
        }
    }
    match given(&changes.lang) {
        None => {}
        Some("") => person.lang = None,
        Some(l) => {
            person.lang = Some(Lang::chosen(l).map_err(|m| ServiceError::invalid("lang", m))?)
        }
    }
    set(&mut person.chats.slack, given(&changes.slack));
    set(&mut person.chats.matrix, given(&changes.matrix));
    set(&mut person.chats.telegram, given(&changes.telegram));

    // The zone first: quiet hours are read in the person's zone, the one given now or the
    // one they have.
    let tz = match given(&changes.tz) {
        None => person.tz.take(),
        Some("") => None,
        Some(name) => Some(canonical_zone(name).map_err(|m| ServiceError::invalid("tz", m))?),
    };
    let window = match (given(&changes.quiet), person.quiet.take()) {
        (Some(""), _) | (None, None) => None,
        (Some(window), _) => Some(window.to_string()),
        (None, Some(kept)) => Some(kept.window()),
    };
    person.quiet = window
        .map(|w| QuietHours::parse(&w, tz.as_deref()))
        .transpose()
        .map_err(|m| ServiceError::invalid("quiet", m))?;
    person.tz = tz;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn someone() -> Person {
        let id = Uuid::now_v7();
        Person {
            email: Some("ana@example.com".into()),
            ..Person::named(id, id, "ana", now())
        }
    }

    fn changes(quiet: Option<&str>, tz: Option<&str>) -> PersonSettings {
        PersonSettings {
            quiet: quiet.map(str::to_string),
            tz: tz.map(str::to_string),
            ..PersonSettings::default()
        }
    }

    #[test]
    fn settings_not_given_stay_and_empty_ones_are_removed() {
        let mut p = someone();
        let c = PersonSettings {
            ntfy_url: Some(" https://ntfy.sh/ana ".into()),
            ..PersonSettings::default()
        };
        apply(&mut p, &c).unwrap();
        assert_eq!(p.email.as_deref(), Some("ana@example.com"));
        assert_eq!(p.ntfy_url.as_deref(), Some("https://ntfy.sh/ana"));
        let c = PersonSettings {
            email: Some(String::new()),
            ..PersonSettings::default()
        };
        apply(&mut p, &c).unwrap();
        assert_eq!(p.email, None);
        assert_eq!(p.ntfy_url.as_deref(), Some("https://ntfy.sh/ana"));
    }

    #[test]
    fn bad_channels_are_refused() {
        for c in [
            PersonSettings {
                email: Some("ana".into()),
                ..PersonSettings::default()
            },
            PersonSettings {
                ntfy_url: Some("ftp://ntfy.sh/ana".into()),
                ..PersonSettings::default()
            },
        ] {
            assert!(apply(&mut someone(), &c).is_err(), "{c:?}");
        }
    }

    #[test]
    fn quiet_hours_are_read_in_the_persons_zone() {
        let mut p = someone();
        apply(&mut p, &changes(Some("22:00-07:00"), Some("Europe/Berlin"))).unwrap();
        apply(&mut p, &changes(Some("23-6"), None)).unwrap();
        let q = p.quiet.clone().unwrap();
        assert_eq!(
            (q.window().as_str(), q.tz.as_str()),
            ("23:00-06:00", "Europe/Berlin")
        );
        apply(&mut p, &changes(None, Some("America/New_York"))).unwrap();
        let q = p.quiet.clone().unwrap();
        assert_eq!(
            (q.window().as_str(), q.tz.as_str()),
            ("23:00-06:00", "America/New_York")
        );
        assert_eq!(p.tz.as_deref(), Some("America/New_York"));
        // Removing the quiet hours keeps the zone; removing the zone keeps the hours, in UTC.
        apply(&mut p, &changes(Some(""), None)).unwrap();
        assert_eq!(
            (p.quiet.as_ref(), p.tz.as_deref()),
            (None, Some("America/New_York"))
        );
        apply(&mut p, &changes(Some("22-7"), Some(""))).unwrap();
        assert_eq!(p.tz, None);
        assert_eq!(p.quiet.unwrap().tz, "UTC");
    }

    #[test]
    fn a_zone_is_set_alone_and_kept_canonically() {
        let mut p = someone();
        apply(&mut p, &changes(None, Some("asia/kolkata"))).unwrap();
        assert_eq!(
            (p.tz.as_deref(), p.quiet.as_ref()),
            (Some("Asia/Kolkata"), None)
        );
        apply(&mut p, &changes(Some("22-7"), None)).unwrap();
        assert_eq!(p.quiet.unwrap().tz, "Asia/Kolkata");
    }

    #[test]
    fn an_unknown_zone_is_refused_naming_it() {
        let mut p = someone();
        let Err(ServiceError::Validation(issues)) =
            apply(&mut p, &changes(None, Some("Europe/Berln")))
        else {
            panic!("accepted");
        };
        assert_eq!(issues[0].path, "tz");
        assert!(
            issues[0]
                .message
                .contains("\"Europe/Berln\": did you mean \"Europe/Berlin\""),
            "{issues:?}"
        );
        assert!(apply(&mut someone(), &changes(Some("25:00-07:00"), None)).is_err());
    }
}
