//! The PostgreSQL store: for production and several replicas.

/// A store on a PostgreSQL database.
pub struct PgStore {}

impl PgStore {
    pub async fn connect(url: &str) -> Result<Self, super::StoreError> {
        let _ = url;
        todo!()
    }
}
