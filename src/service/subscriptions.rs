//! Web Push subscriptions, added from a person's feed page.

use serde_json::Value;

use super::{Service, ServiceError, now};
use crate::domain::address::inner_literal;
use crate::domain::inbox::PushSubscription;
use crate::domain::people::Person;
use crate::domain::subscription::parse_subscription;

impl Service {
    /// Stores (or refreshes) a browser's push subscription for the person of a feed link.
    /// `NotFound` for a link that opens nobody, `Validation` for a subscription that cannot
    /// be used.
    pub async fn subscribe_to_push(
        &self,
        feed_token: &str,
        subscription: &Value,
    ) -> Result<PushSubscription, ServiceError> {
        let viewer = self.open_feed_link(feed_token).await?;
        self.subscribe_person_to_push(&viewer.person, subscription)
            .await
    }

    /// Stores (or refreshes) a browser's push subscription for a person already known (by
    /// their feed link or a bound device).
    pub async fn subscribe_person_to_push(
        &self,
        person: &Person,
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
        self.store()
            .add_push_subscription(person, &sub, now())
            .await?;
        Ok(sub)
    }
}
