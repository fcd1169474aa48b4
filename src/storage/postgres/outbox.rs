//! The outbox on PostgreSQL: messages are added with `unnest` over parallel arrays (one
//! statement for any number), claimed with `FOR UPDATE SKIP LOCKED` so replicas share the
//! work without a leader, and finished in one statement with their side effects.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sqlx::postgres::{PgArguments, Postgres};
use sqlx::query::Query;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::PgStore;
use crate::domain::outbox::{MessageResult, NewMessage, OutboxMessage};
use crate::storage::rows::{self, MessageRow, store_error, to_ms_precision};
use crate::storage::{Messages, StoreError};

/// The rows `unnest` makes of `MessageArrays` bound at `$a`..`$g` (the arrays' columns in
/// order), as `x(id, channel, purpose, payload, not_before, give_up_at, person)`.
macro_rules! unnest_messages {
    ($a:literal, $b:literal, $c:literal, $d:literal, $e:literal, $f:literal, $g:literal) => {
        concat!(
            "unnest(",
            $a,
            "::uuid[], ",
            $b,
            "::text[], ",
            $c,
            "::text[], ",
            $d,
            "::jsonb[], ",
            $e,
            "::timestamptz[], ",
            $f,
            "::timestamptz[], ",
            $g,
            "::text[]) \
             AS x(id, channel, purpose, payload, not_before, give_up_at, person)"
        )
    };
}
pub(super) use unnest_messages;

/// The columns of an outbox insert of messages to no one in particular (fan-outs).
macro_rules! insert_outbox {
    () => {
        "INSERT INTO outbox (id, decision_id, channel, purpose, payload, created_at, \
         next_attempt_at, give_up_at) "
    };
}
pub(super) use insert_outbox;

/// The columns of an outbox insert from `unnest_messages` (and a decision id), ending with
/// the person.
macro_rules! insert_outbox_to {
    () => {
        "INSERT INTO outbox (id, decision_id, channel, purpose, payload, created_at, \
         next_attempt_at, give_up_at, person) "
    };
}
pub(super) use insert_outbox_to;

/// Inserts the `resolved` fan-out of each row of `upd` (see `rows::resolved_fan_out`),
/// with the id `$id`, at `$now`, given up on at `$give_up`.
macro_rules! resolved_fan_out {
    ($id:expr, $now:literal, $give_up:literal) => {
        concat!(
            "fan AS (",
            $crate::storage::postgres::outbox::insert_outbox!(),
            "SELECT ",
            $id,
            ", id, '*', 'resolved', '{}'::jsonb, ",
            $now,
            ", ",
            $now,
            ", ",
            $give_up,
            " FROM upd ON CONFLICT (decision_id, channel, purpose, person) DO NOTHING)"
        )
    };
}
pub(super) use resolved_fan_out;

/// A new UUIDv7 made in SQL (PostgreSQL 18's `uuidv7()`, written out for older servers):
/// for statements that make a number of rows not known beforehand.
macro_rules! sql_uuid_v7 {
    () => {
        "encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing \
         substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) \
         FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid"
    };
}
pub(super) use sql_uuid_v7;

/// New messages as parallel arrays, for `unnest_messages`; each gets a new id.
pub(super) struct MessageArrays<'a> {
    pub ids: Vec<Uuid>,
    pub channels: Vec<&'a str>,
    pub purposes: Vec<&'a str>,
    pub payloads: Vec<Json<&'a Value>>,
    pub not_before: Vec<OffsetDateTime>,
    pub give_up_at: Vec<OffsetDateTime>,
    /// `rows::person_column` of each.
    pub persons: Vec<String>,
}

impl<'a> MessageArrays<'a> {
    /// Binds the arrays as the query's next seven parameters, in `unnest_messages!`'s order.
    pub fn bind<'q>(
        self,
        query: Query<'q, Postgres, PgArguments>,
    ) -> Query<'q, Postgres, PgArguments> {
        query
            .bind(self.ids)
            .bind(self.channels)
            .bind(self.purposes)
            .bind(self.payloads)
            .bind(self.not_before)
            .bind(self.give_up_at)
            .bind(self.persons)
    }

    pub fn new(messages: &'a [NewMessage]) -> Self {
        MessageArrays {
            ids: messages.iter().map(|_| Uuid::now_v7()).collect(),
            channels: messages.iter().map(|m| m.route.as_str()).collect(),
            purposes: messages.iter().map(|m| m.purpose.as_str()).collect(),
            payloads: messages.iter().map(|m| Json(&m.payload)).collect(),
            not_before: messages
                .iter()
                .map(|m| to_ms_precision(m.not_before))
                .collect(),
            give_up_at: messages
                .iter()
                .map(|m| to_ms_precision(m.give_up_at))
                .collect(),
            persons: messages
                .iter()
                .map(|m| rows::person_column(m.person))
                .collect(),
        }
    }
}

#[async_trait]
impl Messages for PgStore {
    async fn enqueue(
        &self,
        decision_id: Uuid,
        messages: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let m = MessageArrays::new(messages);
        let query = sqlx::query(concat!(
            insert_outbox_to!(),
            "SELECT x.id, $1, x.channel, x.purpose, x.payload, $2, x.not_before, x.give_up_at, \
             x.person FROM ",
            unnest_messages!("$3", "$4", "$5", "$6", "$7", "$8", "$9"),
            crate::storage::outbox_on_conflict!()
        ))
        .bind(decision_id)
        .bind(to_ms_precision(now));
        m.bind(query)
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn claim_messages(
        &self,
        now: OffsetDateTime,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        // Replicas claiming at once skip each other's locked rows; a row claimed and committed
        // meanwhile is re-checked against the condition and left out. The due rows are picked
        // once (a materialized CTE): an `IN (… LIMIT …)` subquery may be run again by the plan
        // and hand out more than `limit`.
        sqlx::query_as::<_, MessageRow>(concat!(
            "WITH due AS MATERIALIZED ( \
               SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at <= $1 \
                 AND (claimed_until IS NULL OR claimed_until <= $1) \
               ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED), \
             claimed AS ( \
               UPDATE outbox SET claimed_until = $2, attempts = attempts + 1 \
               WHERE id IN (SELECT id FROM due) \
                 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= $1) \
               RETURNING ",
            message_columns!(),
            ") SELECT ",
            message_columns!(),
            " FROM claimed ORDER BY next_attempt_at, id"
        ))
        .bind(to_ms_precision(now))
        .bind(to_ms_precision(rows::lease_end(now, lease)))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(OutboxMessage::try_from)
        .collect()
    }

    async fn finish_message(
        &self,
        message: &OutboxMessage,
        result: &MessageResult,
        follow_ups: &[NewMessage],
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let now = to_ms_precision(now);
        let (next_attempt_at, sent_at) = rows::finish_times(result, now);
        let detail = rows::notified_detail(message, result);
        let f = MessageArrays::new(follow_ups);
        // Everything hangs on `upd`: a message no longer pending (a late duplicate finish) is
        // left alone, and nothing else is written. A notice about no decision (NULL
        // decision_id) has no notification state or audit trail.
        let query = sqlx::query(concat!(
            "WITH upd AS ( \
               UPDATE outbox SET status = $2, next_attempt_at = COALESCE($3, next_attempt_at), \
                 claimed_until = NULL, sent_at = COALESCE($4, sent_at), last_error = $5 \
               WHERE id = $1 AND status = 'pending' RETURNING decision_id), \
             n AS ( \
               INSERT INTO notifications (decision_id, channel, status, detail, updated_at) \
               SELECT decision_id, $6, $2, $5, $7 FROM upd \
               WHERE $6 <> '*' AND decision_id IS NOT NULL \
               ON CONFLICT (decision_id, channel) DO UPDATE SET status = excluded.status, \
                 detail = excluded.detail, updated_at = excluded.updated_at), \
             ev AS ( \
               INSERT INTO decision_events (decision_id, at, kind, detail) \
               SELECT decision_id, $7, 'notified', $8 FROM upd WHERE decision_id IS NOT NULL), \
             f AS (",
            insert_outbox_to!(),
            "SELECT x.id, upd.decision_id, x.channel, x.purpose, x.payload, $7, x.not_before, \
               x.give_up_at, x.person FROM upd, ",
            unnest_messages!("$9", "$10", "$11", "$12", "$13", "$14", "$15"),
            crate::storage::outbox_on_conflict!(),
            ") SELECT COUNT(*) FROM upd"
        ))
        .bind(message.id)
        .bind(result.status.as_str())
        .bind(next_attempt_at.map(to_ms_precision))
        .bind(sent_at)
        .bind(&result.detail)
        .bind(message.route)
        .bind(now)
        .bind(Json(&detail));
        f.bind(query)
            .execute(&self.pool)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn messages(&self, decision_id: Uuid) -> Result<Vec<OutboxMessage>, StoreError> {
        sqlx::query_as::<_, MessageRow>(concat!(
            "SELECT ",
            message_columns!(),
            " FROM outbox WHERE decision_id = $1 ORDER BY created_at, id"
        ))
        .bind(decision_id)
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(OutboxMessage::try_from)
        .collect()
    }
}
