//! The inboxes' chains of receipts.

use async_trait::async_trait;
use uuid::Uuid;

use crate::storage::rows::{Id, ReceiptRow, store_error};
use crate::storage::{Receipts, StoreError, StoredReceipt};

for_both_stores! {
    #[async_trait]
    impl Receipts for Backend {
        /// Read on the writer: the chainer appends right after, and must see the latest head.
        async fn receipt_head(&self, inbox: Uuid) -> Result<Option<StoredReceipt>, StoreError> {
            let row: Option<ReceiptRow> = sqlx::query_as(concat!(
                "SELECT ",
                receipt_columns!(),
                " FROM receipts WHERE inbox_id = $1 ORDER BY seq DESC LIMIT 1"
            ))
            .bind(Id(inbox))
            .fetch_optional(self.writes())
            .await
            .map_err(store_error)?;
            Ok(row.map(StoredReceipt::from))
        }

        /// `ON CONFLICT DO NOTHING` covers both the place in the chain (the primary key) and
        /// the decision (unique): a replica that lost the race writes nothing and reads the
        /// head again.
        async fn append_receipt(&self, r: &StoredReceipt) -> Result<bool, StoreError> {
            let done = sqlx::query(concat!(
                "INSERT INTO receipts (",
                receipt_columns!(),
                ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING"
            ))
            .bind(Id(r.inbox_id))
            .bind(r.seq)
            .bind(Id(r.decision_id))
            .bind(r.event_id)
            .bind(&r.receipt)
            .bind(&r.signature)
            .bind(&r.sha256)
            .execute(self.writes())
            .await
            .map_err(store_error)?;
            Ok(done.rows_affected() == 1)
        }

        async fn receipt(
            &self,
            inbox: Uuid,
            decision: Uuid,
        ) -> Result<Option<StoredReceipt>, StoreError> {
            let row: Option<ReceiptRow> = sqlx::query_as(concat!(
                "SELECT ",
                receipt_columns!(),
                " FROM receipts WHERE inbox_id = $1 AND decision_id = $2"
            ))
            .bind(Id(inbox))
            .bind(Id(decision))
            .fetch_optional(self.reads())
            .await
            .map_err(store_error)?;
            Ok(row.map(StoredReceipt::from))
        }

        async fn receipts(
            &self,
            inbox: Uuid,
            from_seq: i64,
            limit: u32,
        ) -> Result<Vec<StoredReceipt>, StoreError> {
            let rows: Vec<ReceiptRow> = sqlx::query_as(concat!(
                "SELECT ",
                receipt_columns!(),
                " FROM receipts WHERE inbox_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3"
            ))
            .bind(Id(inbox))
            .bind(from_seq)
            .bind(i64::from(limit))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?;
            Ok(rows.into_iter().map(StoredReceipt::from).collect())
        }
    }
}
