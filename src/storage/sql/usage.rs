//! Usage counters and the daily quota.

use async_trait::async_trait;
use time::Date;
use uuid::Uuid;

use crate::domain::inbox::Usage;
use crate::storage::rows::{Id, changed_any, store_error};
use crate::storage::{Quotas, StoreError};

for_both_stores! {
    #[async_trait]
    impl Quotas for Backend {
        async fn usage(&self, inbox: Uuid, today: Date) -> Result<Usage, StoreError> {
            // The stores keep a day and sum by it each their own way: the inherent `usage` in
            // `sqlite/usage.rs` and `postgres/usage.rs`.
            Backend::usage(self, inbox, today).await
        }

        async fn set_daily_quota(&self, inbox: Uuid, quota: Option<i64>) -> Result<(), StoreError> {
            sqlx::query("UPDATE inboxes SET daily_quota = $1 WHERE id = $2")
                .bind(quota)
                .bind(Id(inbox))
                .execute(self.writes())
                .await
                .map_err(store_error)
                .and_then(|r| changed_any(r.rows_affected()))
        }
    }
}
