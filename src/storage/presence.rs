//! Whether a database URL names a sayso database already, looked at without creating or
//! changing anything: the commands other than `serve` work on the database `serve` made and
//! must not leave an empty one behind when pointed at the wrong place.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use super::StoreError;
use super::rows::store_error;

/// How long a look at a PostgreSQL server may take before it counts as unreachable.
const PG_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What is at a database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// A database with sayso's tables (or a memory database, which only `serve` can fill).
    Sayso,
    /// A SQLite URL whose file does not exist: the absolute path looked for.
    NoFile(PathBuf),
    /// A database that exists but has none of sayso's tables: where it is (an absolute
    /// path, or the URL without its password).
    Empty(String),
}

/// Looks at the database `url` names; never creates a file, a table or a row.
pub async fn presence(url: &str) -> Result<Presence, StoreError> {
    let scheme = url.split_once(':').map(|(s, _)| s).unwrap_or("");
    match scheme {
        "sqlite" => sqlite_presence(url).await,
        "postgres" | "postgresql" => pg_presence(url).await,
        _ => Err(StoreError::Other(format!(
            "unknown database scheme {scheme:?} in SAYSO_DATABASE_URL: use sqlite://PATH or postgres://…"
        ))),
    }
}

async fn sqlite_presence(url: &str) -> Result<Presence, StoreError> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Ok(Presence::Sayso);
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Other(format!("database URL {url:?}: {e}")))?
        .create_if_missing(false)
        .read_only(true);
    let path = options.get_filename().to_path_buf();
    let path = std::path::absolute(&path).unwrap_or(path);
    if !path.exists() {
        return Ok(Presence::NoFile(path));
    }
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(store_error)?;
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'inboxes'",
    )
    .fetch_one(&mut conn)
    .await
    .map_err(store_error)?;
    let _ = conn.close().await;
    Ok(if tables > 0 {
        Presence::Sayso
    } else {
        Presence::Empty(path.display().to_string())
    })
}

async fn pg_presence(url: &str) -> Result<Presence, StoreError> {
    let options: PgConnectOptions = url.parse().map_err(store_error)?;
    let mut conn = match tokio::time::timeout(
        PG_CONNECT_TIMEOUT,
        PgConnection::connect_with(&options),
    )
    .await
    {
        Ok(conn) => conn.map_err(store_error)?,
        Err(_) => {
            return Err(StoreError::Unavailable(format!(
                "no answer from the database within {} s",
                PG_CONNECT_TIMEOUT.as_secs()
            )));
        }
    };
    let found: bool = sqlx::query_scalar("SELECT to_regclass('inboxes') IS NOT NULL")
        .fetch_one(&mut conn)
        .await
        .map_err(store_error)?;
    let _ = conn.close().await;
    Ok(if found {
        Presence::Sayso
    } else {
        Presence::Empty(without_password(url))
    })
}

/// A database URL fit to print: a password is masked.
pub fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("****"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_sqlite_file_is_named_and_not_made() {
        let dir = std::env::temp_dir().join(format!("sayso-presence-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("none.db");
        let url = format!("sqlite://{}", file.display());
        assert_eq!(
            presence(&url).await.unwrap(),
            Presence::NoFile(file.clone())
        );
        assert!(!file.exists());
        std::fs::write(&file, b"").unwrap();
        let shown = file.display().to_string();
        assert_eq!(presence(&url).await.unwrap(), Presence::Empty(shown));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_database_password_is_never_printed() {
        assert_eq!(
            without_password("postgres://sayso:secret@db:5432/sayso"),
            "postgres://sayso:****@db:5432/sayso"
        );
        assert_eq!(
            without_password("postgres://postgres@db/x"),
            "postgres://postgres@db/x"
        );
    }
}
