//! The SQLite store: the embedded default.

/// A store on one SQLite file.
pub struct SqliteStore {}

impl SqliteStore {
    pub async fn connect(url: &str) -> Result<Self, super::StoreError> {
        let _ = url;
        todo!()
    }
}
