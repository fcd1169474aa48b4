//! Usage counters on SQLite; setting the daily quota is in `sql/usage.rs`.

use time::Date;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::domain::inbox::{Usage, UsageCount};
use crate::storage::StoreError;
use crate::storage::rows::store_error;

/// A UTC day as stored: `YYYY-MM-DD`, which sorts as the days do.
pub(super) fn day_text(day: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

impl SqliteStore {
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
            "SELECT COALESCE(SUM(CASE WHEN day = ?2 THEN actions END), 0), \
                    COALESCE(SUM(CASE WHEN day = ?2 THEN creates END), 0), \
                    COALESCE(SUM(actions), 0), COALESCE(SUM(creates), 0), \
                    (SELECT daily_quota FROM inboxes WHERE id = ?1) \
             FROM usage_daily WHERE inbox_id = ?1 AND day >= ?3 AND day <= ?2",
        )
        .bind(id(inbox))
        .bind(day_text(today))
        .bind(day_text(month_start))
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
