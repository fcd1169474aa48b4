//! Web Push subscriptions, added from an inbox's feed page.

use serde_json::Value;

use super::{Service, ServiceError, now};
use crate::domain::address::inner_literal;
use crate::domain::inbox::PushSubscription;
use crate::domain::subscription::parse_subscription;

impl Service {
    /// Stores (or refreshes) a browser's push subscription for the inbox of a feed link.
    /// `NotFound` for a link that opens no inbox, `Validation` for a subscription that
    /// cannot be used.
    pub async fn subscribe_to_push(
        &self,
        feed_token: &str,
        subscription: &Value,
    ) -> Result<PushSubscription, ServiceError> {
        let inbox_id = self
            .tokens()
            .open_feed_token(feed_token)
            .ok_or(ServiceError::NotFound)?;
        self.subscribe_inbox_to_push(inbox_id, subscription).await
    }

    /// Stores (or refreshes) a browser's push subscription for an inbox already opened (by
    /// its feed link or a bound device).
    pub async fn subscribe_inbox_to_push(
        &self,
        inbox_id: uuid::Uuid,
        subscription: &Value,
    ) -> Result<PushSubscription, ServiceError> {
        let sub = parse_subscription(subscription).map_err(ServiceError::Validation)?;
        if !self.settings().allow_private_webhooks
            && let Some(ip) = url::Url::parse(&sub.endpoint)
                .ok()
                .as_ref()
                .and_then(inner_literal)
        {
            return Err(ServiceError::invalid(
                "endpoint",
                format!(
                    "names the inner address {ip}; this server calls public addresses only \
                     (set SAYSO_ALLOW_PRIVATE_WEBHOOKS=1 to allow loopback and private ones)"
                ),
            ));
        }
        let inbox = self
            .store()
            .inbox_by_id(inbox_id)
            .await?
            .ok_or(ServiceError::NotFound)?;
        self.store()
            .add_push_subscription(inbox.id, &sub, now())
            .await?;
        Ok(sub)
    }
}
