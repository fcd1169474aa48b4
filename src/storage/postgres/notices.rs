//! The notices to a person that are about no decision (a passkey added to them).

use async_trait::async_trait;
use time::OffsetDateTime;

use super::PgStore;
use super::outbox::{MessageArrays, unnest_messages};
use crate::domain::outbox::NewMessage;
use crate::storage::rows::{self, store_error, to_ms_precision};
use crate::storage::{Notices, StoreError};

#[async_trait]
impl Notices for PgStore {
    async fn enqueue_notices(
        &self,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let now = to_ms_precision(now);
        sqlx::query(
            "DELETE FROM outbox WHERE decision_id IS NULL AND status <> 'pending' AND created_at < $1",
        )
        .bind(now - rows::NOTICE_KEPT)
        .execute(&self.pool)
        .await
        .map_err(store_error)?;
        let m = MessageArrays::new(messages);
        let query = sqlx::query(concat!(
            "INSERT INTO outbox (id, decision_id, channel, purpose, payload, created_at, \
             next_attempt_at, give_up_at, person) \
             SELECT x.id, NULL, x.channel, x.purpose, x.payload, $1, x.not_before, x.give_up_at, \
             x.person FROM ",
            unnest_messages!("$2", "$3", "$4", "$5", "$6", "$7", "$8"),
        ))
        .bind(now);
        m.bind(query)
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}
