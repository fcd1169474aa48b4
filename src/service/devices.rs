//! Devices bound to a person: a browser that opens a person's feed link gets a cookie
//! naming a device row, and from then on opens the feed at `/inbox` without the link. An
//! answer from such a browser is that person's, and records the device for the audit trail.

use uuid::Uuid;

use super::{Service, ServiceError, now};
use crate::domain::inbox::Inbox;
use crate::domain::people::Person;

/// The name of the device cookie when the public URL is plain http.
pub const DEVICE_COOKIE: &str = "sayso_device";
/// Its name behind https. The `__Host-` prefix has the browser keep it only when it is
/// `Secure`, for this host alone (no `Domain`) and the whole site (`Path=/`), so no other
/// host of the same domain can set one for sayso's pages.
pub const SECURE_DEVICE_COOKIE: &str = "__Host-sayso_device";

/// A person with their inbox: who is looking at a feed.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub person: Person,
    pub inbox: Inbox,
}

impl Service {
    /// The person a feed link opens, with their inbox; `NotFound` for a link that opens
    /// nobody (forged, or the person was removed).
    pub async fn open_feed_link(&self, feed_token: &str) -> Result<Viewer, ServiceError> {
        let person_id = self
            .tokens()
            .open_feed_token(feed_token)
            .ok_or(ServiceError::NotFound)?;
        let person = self
            .store()
            .person(person_id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.viewer(person).await
    }

    async fn viewer(&self, person: Person) -> Result<Viewer, ServiceError> {
        let inbox = self
            .store()
            .inbox_by_id(person.inbox_id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        Ok(Viewer { person, inbox })
    }

    /// Opens a feed link on a browser: the person, and a new device cookie to set unless
    /// the browser's `cookie` already names a device of that person. `NotFound` for a link
    /// that opens nobody.
    pub async fn bind_device(
        &self,
        feed_token: &str,
        cookie: Option<&str>,
    ) -> Result<(Viewer, Option<String>), ServiceError> {
        let viewer = self.open_feed_link(feed_token).await?;
        if let Some((_, bound)) = self.bound_person(cookie).await
            && bound.id == viewer.person.id
        {
            return Ok((viewer, None));
        }
        let device = Uuid::now_v7();
        self.store()
            .add_device(device, &viewer.person, now())
            .await?;
        tracing::info!(
            inbox = %viewer.inbox.name, person = %viewer.person.name, %device,
            "a device opened a feed link and is bound"
        );
        Ok((viewer, Some(self.tokens().device_token(device))))
    }

    /// The person (with their inbox) of the bound device a cookie names; `NotFound` without
    /// one.
    pub async fn device_viewer(&self, cookie: Option<&str>) -> Result<Viewer, ServiceError> {
        let device = cookie
            .and_then(|c| self.tokens().open_device_token(c))
            .ok_or(ServiceError::NotFound)?;
        let person = self
            .store()
            .device_person(device)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.viewer(person).await
    }

    /// The device a cookie names and its person, if it is genuine and bound. A database
    /// error leaves the device unknown (an answer is then recorded without it).
    pub async fn bound_person(&self, cookie: Option<&str>) -> Option<(Uuid, Person)> {
        let device = self.tokens().open_device_token(cookie?)?;
        match self.store().device_person(device).await {
            Ok(person) => person.map(|p| (device, p)),
            Err(e) => {
                tracing::warn!(error = %e, "could not look up a device");
                None
            }
        }
    }
}
