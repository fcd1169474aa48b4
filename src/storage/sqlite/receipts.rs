//! The inboxes' chains of receipts.

use async_trait::async_trait;
use uuid::Uuid;

use super::SqliteStore;
use super::rows::id;
use crate::storage::rows::{ReceiptRow, store_error};
use crate::storage::{Receipts, StoreError, StoredReceipt};

#[async_trait]
impl Receipts for SqliteStore {
    /// Read on the writer: the chainer appends right after, and must see the latest head.
    async fn receipt_head(&self, inbox: Uuid) -> Result<Option<StoredReceipt>, StoreError> {
        let row: Option<ReceiptRow> = sqlx::query_as(concat!(
            "SELECT ",
            receipt_columns!(),
            " FROM receipts WHERE inbox_id = ? ORDER BY seq DESC LIMIT 1"
        ))
        .bind(id(inbox))
        .fetch_optional(&self.writer)
        .await
        .map_err(store_error)?;
        Ok(row.map(StoredReceipt::from))
    }

    async fn append_receipt(&self, r: &StoredReceipt) -> Result<bool, StoreError> {
        let done = sqlx::query(concat!(
            "INSERT INTO receipts (",
            receipt_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
        ))
        .bind(id(r.inbox_id))
        .bind(r.seq)
        .bind(id(r.decision_id))
        .bind(r.event_id)
        .bind(&r.receipt)
        .bind(&r.signature)
        .bind(&r.sha256)
        .execute(&self.writer)
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
            " FROM receipts WHERE inbox_id = ? AND decision_id = ?"
        ))
        .bind(id(inbox))
        .bind(id(decision))
        .fetch_optional(&self.pool)
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
            " FROM receipts WHERE inbox_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
        ))
        .bind(id(inbox))
        .bind(from_seq)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(StoredReceipt::from).collect())
    }
}
