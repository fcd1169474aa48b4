//! Usage counters on PostgreSQL; setting the daily quota is in `sql/usage.rs`.

use sqlx::PgConnection;
use time::Date;
use uuid::Uuid;

use super::PgStore;
use crate::domain::inbox::{Usage, UsageCount};
use crate::storage::rows::store_error;
use crate::storage::{CREATE_ACTIONS, StoreError};

/// Counts a create on `day` for an inbox with a quota, unless the quota has no room for it;
/// returns whether it was counted. The inbox's row for the day (shard 0) is locked until the
/// transaction ends, so concurrent creates take turns and none overshoots: a conflicting
/// insert re-checks the `WHERE` against the row as the last one left it.
pub(super) async fn charge_with_quota(
    conn: &mut PgConnection,
    inbox: Uuid,
    day: Date,
) -> Result<bool, StoreError> {
    let counted: Option<i64> = sqlx::query_scalar(
        "INSERT INTO usage_daily (inbox_id, day, shard, actions, creates) \
         SELECT $1, $2, 0, $3, 1 FROM inboxes i \
         WHERE i.id = $1 AND (i.daily_quota IS NULL OR \
           (SELECT COALESCE(SUM(actions), 0) FROM usage_daily \
            WHERE inbox_id = $1 AND day = $2) + $3 <= i.daily_quota) \
         ON CONFLICT (inbox_id, day, shard) DO UPDATE \
         SET actions = usage_daily.actions + EXCLUDED.actions, \
             creates = usage_daily.creates + 1 \
         WHERE (SELECT daily_quota FROM inboxes WHERE id = $1) IS NULL \
            OR usage_daily.actions + EXCLUDED.actions \
               + (SELECT COALESCE(SUM(actions), 0) FROM usage_daily o \
                  WHERE o.inbox_id = $1 AND o.day = $2 AND o.shard <> 0) \
               <= (SELECT daily_quota FROM inboxes WHERE id = $1) \
         RETURNING actions",
    )
    .bind(inbox)
    .bind(day)
    .bind(CREATE_ACTIONS)
    .fetch_optional(conn)
    .await
    .map_err(store_error)?;
    Ok(counted.is_some())
}

impl PgStore {
    /// `Quotas::usage`: the day's and the month's sums, and the quota, in one query.
    pub(in crate::storage) async fn usage(
        &self,
        inbox: Uuid,
        today: Date,
    ) -> Result<Usage, StoreError> {
        let month_start = today.replace_day(1).unwrap_or(today);
        let (day_actions, day_creates, month_actions, month_creates, quota): (
            i64,
            i64,
            i64,
            i64,
            Option<i64>,
        ) = sqlx::query_as(
            "SELECT COALESCE(SUM(actions) FILTER (WHERE day = $2), 0)::bigint, \
                    COALESCE(SUM(creates) FILTER (WHERE day = $2), 0)::bigint, \
                    COALESCE(SUM(actions), 0)::bigint, COALESCE(SUM(creates), 0)::bigint, \
                    (SELECT daily_quota FROM inboxes WHERE id = $1) \
             FROM usage_daily WHERE inbox_id = $1 AND day >= $3 AND day <= $2",
        )
        .bind(inbox)
        .bind(today)
        .bind(month_start)
        .fetch_one(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(Usage {
            today: UsageCount {
                actions: day_actions,
                creates: day_creates,
            },
            month: UsageCount {
                actions: month_actions,
                creates: month_creates,
            },
            daily_quota: quota,
        })
    }
}
