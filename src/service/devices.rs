//! Devices bound to an inbox: a browser that opens the inbox's feed link gets a cookie
//! naming a device row, and from then on opens the feed at `/inbox` without the link. An
//! answer from such a browser records the device, for the audit trail.

use uuid::Uuid;

use super::{Service, ServiceError, now};
use crate::domain::inbox::Inbox;

/// The name of the device cookie.
pub const DEVICE_COOKIE: &str = "sayso_device";

impl Service {
    /// Opens a feed link on a browser: the inbox, and a new device cookie to set unless the
    /// browser's `cookie` already names a device of that inbox. `NotFound` for a link that
    /// opens no inbox.
    pub async fn bind_device(
        &self,
        feed_token: &str,
        cookie: Option<&str>,
    ) -> Result<(Inbox, Option<String>), ServiceError> {
        let inbox_id = self
            .tokens()
            .open_feed_token(feed_token)
            .ok_or(ServiceError::NotFound)?;
        let inbox = self
            .store()
            .inbox_by_id(inbox_id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        if self.bound_device(cookie, inbox.id).await.is_some() {
            return Ok((inbox, None));
        }
        let device = Uuid::now_v7();
        self.store().add_device(device, inbox.id, now()).await?;
        tracing::info!(inbox = %inbox.name, %device, "a device opened the feed link and is bound");
        Ok((inbox, Some(self.tokens().device_token(device))))
    }

    /// The inbox of the bound device a cookie names; `NotFound` without one.
    pub async fn device_inbox(&self, cookie: Option<&str>) -> Result<Inbox, ServiceError> {
        let device = cookie
            .and_then(|c| self.tokens().open_device_token(c))
            .ok_or(ServiceError::NotFound)?;
        let inbox_id = self
            .store()
            .device_inbox(device)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.store()
            .inbox_by_id(inbox_id)
            .await?
            .ok_or(ServiceError::NotFound)
    }

    /// The device a cookie names, if it is genuine and bound to `inbox_id`. A database
    /// error leaves the device unknown (the answer is still the person's; only the audit
    /// trail lacks the device).
    pub async fn bound_device(&self, cookie: Option<&str>, inbox_id: Uuid) -> Option<Uuid> {
        let device = self.tokens().open_device_token(cookie?)?;
        match self.store().device_inbox(device).await {
            Ok(Some(inbox)) if inbox == inbox_id => Some(device),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, "could not look up a device");
                None
            }
        }
    }
}
