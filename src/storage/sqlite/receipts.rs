//! The inboxes' chains of receipts.

use super::SqliteStore;
use super::rows::id;
use crate::storage::rows::{ReceiptRow, store_error};
use crate::storage::{StoreError, StoredReceipt};
use uuid::Uuid;

/// Read on the writer: the chainer appends right after, and must see the latest head.
pub(super) async fn receipt_head(
    store: &SqliteStore,
    inbox: Uuid,
) -> Result<Option<StoredReceipt>, StoreError> {
    let row: Option<ReceiptRow> = sqlx::query_as(concat!(
        "SELECT ",
        receipt_columns!(),
        " FROM receipts WHERE inbox_id = ? ORDER BY seq DESC LIMIT 1"
    ))
    .bind(id(inbox))
    .fetch_optional(&store.writer)
    .await
    .map_err(store_error)?;
    Ok(row.map(StoredReceipt::from))
}

pub(super) async fn append_receipt(
    store: &SqliteStore,
    r: &StoredReceipt,
) -> Result<bool, StoreError> {
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
    .execute(&store.writer)
    .await
    .map_err(store_error)?;
    Ok(done.rows_affected() == 1)
}

pub(super) async fn receipt(
    store: &SqliteStore,
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
    .fetch_optional(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(row.map(StoredReceipt::from))
}

pub(super) async fn receipts(
    store: &SqliteStore,
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
    .fetch_all(&store.pool)
    .await
    .map_err(store_error)?;
    Ok(rows.into_iter().map(StoredReceipt::from).collect())
}
