//! A `sayso serve` process on port 0, and the admin commands run as people run them.

use tokio::process::Command;

use crate::common::db::{PgTestDb, fresh_pg_url};
use crate::common::first_run::StateDir;
use crate::common::process::{LOG, serve_command};
use crate::common::server::init_tls;

pub const BIN: &str = env!("CARGO_BIN_EXE_sayso");

/// A `sayso serve` process on port 0.
pub use crate::common::process::SaysoProcess as Replica;

pub async fn start_replica(database_url: &str) -> Replica {
    start_replica_with(database_url, &[]).await
}

/// `sayso serve` on `database_url` with `env` on top, at the rate limit it has by default.
pub async fn start_replica_with(database_url: &str, env: &[(&str, &str)]) -> Replica {
    let state = StateDir::new();
    let mut cmd = serve_command(BIN, &state, database_url, Some("127.0.0.1:0"));
    cmd.env("SAYSO_LOG", LOG).envs(env.iter().copied());
    Replica::launch(cmd, state).await
}

/// Two replicas on one fresh PostgreSQL database and the key the first one made for the
/// inbox; `None` when no PostgreSQL is at hand.
pub async fn two_replicas() -> Option<(PgTestDb, Replica, Replica, String)> {
    init_tls();
    let db = fresh_pg_url().await?;
    let a = start_replica(&db.url).await;
    let key = a.key.clone().expect("the first replica makes the inbox");
    let b = start_replica(&db.url).await;
    Some((db, a, b, key))
}

pub async fn sayso(args: &[&str], database_url: &str) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("SAYSO_DATABASE_URL", database_url)
        .env_remove("SAYSO_LISTEN")
        .env_remove("SAYSO_PUBLIC_URL")
        .output()
        .await
        .unwrap()
}
