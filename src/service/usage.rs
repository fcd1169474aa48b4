//! Usage: what an inbox's creates cost, and its optional daily quota.

use serde::Serialize;
use time::OffsetDateTime;

use super::{Service, ServiceError, now};
use crate::domain::inbox::{Inbox, UsageCount};

/// `GET /v1/usage`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = Usage, example = json!({"today": {"actions": 12, "creates": 6}, "month": {"actions": 340, "creates": 170}, "quota": {"daily_actions": 500, "remaining_today": 488}}))]
pub struct UsageView {
    /// This UTC day so far.
    pub today: UsageCount,
    /// This UTC month so far, today included.
    pub month: UsageCount,
    pub quota: QuotaView,
}

/// The daily quota and what is left of it today; both null when the inbox has none.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = Quota)]
pub struct QuotaView {
    pub daily_actions: Option<i64>,
    pub remaining_today: Option<i64>,
}

impl Service {
    /// The inbox's usage today and this month, UTC.
    pub async fn usage(&self, inbox: &Inbox) -> Result<UsageView, ServiceError> {
        let today = now().date();
        let u = self.store().usage(inbox.id, today).await?;
        Ok(UsageView {
            today: u.today,
            month: u.month,
            quota: QuotaView {
                daily_actions: u.daily_quota,
                remaining_today: u.daily_quota.map(|q| (q - u.today.actions).max(0)),
            },
        })
    }

    /// Sets the named inbox's daily quota of actions; `None` (or 0) removes it.
    pub async fn set_daily_quota(
        &self,
        name: &str,
        quota: Option<i64>,
    ) -> Result<(), ServiceError> {
        let quota = quota.filter(|q| *q != 0);
        if quota.is_some_and(|q| q < 0) {
            return Err(ServiceError::invalid(
                "quota",
                "must be a positive number of actions",
            ));
        }
        let inbox = self
            .store()
            .inbox_by_name(name)
            .await?
            .ok_or(ServiceError::NotFound)?;
        Ok(self.store().set_daily_quota(inbox.id, quota).await?)
    }
}

/// Whole seconds from `t` to the next UTC midnight, at least 1.
pub(super) fn seconds_to_utc_midnight(t: OffsetDateTime) -> u64 {
    let t = t.to_offset(time::UtcOffset::UTC);
    let midnight = t.date().next_day().map(|d| d.midnight().assume_utc());
    match midnight {
        Some(m) => ((m - t).whole_milliseconds().max(0) as u64)
            .div_ceil(1000)
            .max(1),
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn retry_after_counts_to_the_next_utc_midnight() {
        assert_eq!(
            seconds_to_utc_midnight(datetime!(2025-03-01 23:59:59 UTC)),
            1
        );
        assert_eq!(
            seconds_to_utc_midnight(datetime!(2025-03-01 00:00:00 UTC)),
            86_400
        );
        assert_eq!(
            seconds_to_utc_midnight(datetime!(2025-03-01 23:00:00.5 UTC)),
            3600
        );
        // 01:00 at +02:00 is 23:00 UTC the day before.
        assert_eq!(
            seconds_to_utc_midnight(datetime!(2025-03-02 01:00:00 +02:00)),
            3600
        );
    }
}
