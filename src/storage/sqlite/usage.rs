//! Usage counters, the daily quota, and the inbox's resolutions in event-id order.

use sqlx::SqlitePool;
use time::Date;
use uuid::Uuid;
use uuid::fmt::Hyphenated;

use super::id;
use crate::storage::rows::store_error;
use crate::storage::{StoreError, Usage, UsageCount};

/// A UTC day as stored: `YYYY-MM-DD`, which sorts as the days do.
pub(super) fn day_text(day: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

pub(super) async fn usage(
    pool: &SqlitePool,
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
        "SELECT COALESCE(SUM(CASE WHEN day = ?2 THEN actions END), 0), \
                COALESCE(SUM(CASE WHEN day = ?2 THEN creates END), 0), \
                COALESCE(SUM(actions), 0), COALESCE(SUM(creates), 0), \
                (SELECT daily_quota FROM inboxes WHERE id = ?1) \
         FROM usage_daily WHERE inbox_id = ?1 AND day >= ?3 AND day <= ?2",
    )
    .bind(id(inbox))
    .bind(day_text(today))
    .bind(day_text(month_start))
    .fetch_one(pool)
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

pub(super) async fn set_daily_quota(
    pool: &SqlitePool,
    inbox: Uuid,
    quota: Option<i64>,
) -> Result<(), StoreError> {
    let updated = sqlx::query("UPDATE inboxes SET daily_quota = ? WHERE id = ?")
        .bind(quota)
        .bind(id(inbox))
        .execute(pool)
        .await
        .map_err(store_error)?
        .rows_affected();
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// One writer at a time commits, in `BEGIN IMMEDIATE` order, so event ids are visible in the
/// order they were given out.
pub(super) async fn resolutions_since(
    pool: &SqlitePool,
    inbox: Uuid,
    after: i64,
    limit: u32,
) -> Result<Vec<(i64, Uuid)>, StoreError> {
    let rows: Vec<(i64, Hyphenated)> = sqlx::query_as(
        "SELECT e.id, e.decision_id FROM decision_events e \
         JOIN decisions d ON d.id = e.decision_id \
         WHERE e.id > ? AND e.kind IN ('answered', 'declined', 'cancelled', 'expired') \
           AND d.inbox_id = ? \
         ORDER BY e.id LIMIT ?",
    )
    .bind(after)
    .bind(id(inbox))
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(store_error)?;
    Ok(rows
        .into_iter()
        .map(|(event, decision)| (event, decision.into_uuid()))
        .collect())
}
