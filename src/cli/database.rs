//! Opening the database for a command. `serve` makes it when it is missing; every other
//! command only opens one `serve` made, and when there is none says where it looked and how
//! to point at the right one, leaving nothing behind.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{DatabaseArgs, LinkArgs};
use crate::service::{Service, ServiceSettings};
use crate::storage::{self, Presence, Store, StoreError, without_password};

/// The server-wide setting that holds the public URL the last `serve` ran with.
pub(super) const PUBLIC_URL_SETTING: &str = "public_url";

/// Whether the command prints links, and so must know the server's public URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Links {
    Printed,
    None,
}

/// Opens the service on the database `serve` runs on, for an admin command. Links are built
/// from `--public-url` / `SAYSO_PUBLIC_URL` when given, else from the URL `serve` recorded.
pub(super) async fn open(
    db: &DatabaseArgs,
    links: Option<&LinkArgs>,
    printed: Links,
) -> anyhow::Result<Service> {
    let url = &db.database_url;
    match storage::presence(url).await {
        Ok(Presence::Sayso) => {}
        Ok(Presence::NoFile(path)) => anyhow::bail!(
            "there is no sayso database at {}: run this where `sayso serve` runs (a relative \
             sqlite:// path is read from the working directory), or name the server's database \
             with --database-url sqlite://PATH or SAYSO_DATABASE_URL. Nothing was created; \
             only `sayso serve` makes a database",
            path.display()
        ),
        Ok(Presence::Empty(at)) => anyhow::bail!(
            "{at} is not a sayso database yet: run `sayso serve` on it once, which makes its \
             tables and the inbox \"default\""
        ),
        Err(StoreError::Unavailable(cause)) => {
            anyhow::bail!(
                "cannot reach the database {}: {cause}",
                without_password(url)
            )
        }
        Err(e) => anyhow::bail!("cannot open the database {}: {e}", without_password(url)),
    }
    let store = connect_waiting(url, Duration::ZERO).await?;
    let public_url = public_url(store.as_ref(), links).await?;
    if printed == Links::Printed && public_url.is_none() {
        anyhow::bail!(
            "cannot tell the address of the links to print: no `sayso serve` has recorded its \
             public URL in this database yet (each start records it). Give it with \
             --public-url URL or SAYSO_PUBLIC_URL, or start `sayso serve` once"
        );
    }
    let settings = ServiceSettings {
        // Only commands that print links read it, and those have one (checked above).
        public_url: public_url.unwrap_or_default(),
        max_await: Duration::from_secs(600),
        expiry_interval: Duration::from_secs(1),
        email_enabled: false,
        allow_private_webhooks: false,
        retention: None,
        urgent_per_hour: 0,
    };
    Service::new(store, settings).await.map_err(super::describe)
}

/// The public URL given to the command, else the one `serve` recorded.
async fn public_url(store: &dyn Store, links: Option<&LinkArgs>) -> anyhow::Result<Option<String>> {
    if let Some(raw) = links.and_then(|l| l.public_url.as_deref()) {
        return crate::config::checked_public_url(raw)
            .map(Some)
            .map_err(anyhow::Error::msg);
    }
    store
        .setting(PUBLIC_URL_SETTING)
        .await
        .map_err(|e| anyhow::anyhow!("cannot read the recorded public URL: {e}"))
}

/// Connects to the database; while it cannot be reached, retries for up to `wait` (a server
/// started with its database, or just before it, waits for it instead of exiting at once).
pub(super) async fn connect_waiting(url: &str, wait: Duration) -> anyhow::Result<Arc<dyn Store>> {
    let started = Instant::now();
    loop {
        match storage::connect(url).await {
            Ok(store) => return Ok(store),
            Err(StoreError::Unavailable(cause)) if started.elapsed() < wait => {
                tracing::warn!(
                    %cause,
                    waited_s = started.elapsed().as_secs(),
                    wait_s = wait.as_secs(),
                    "cannot reach the database; waiting for it"
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(StoreError::Unavailable(cause)) if wait.is_zero() => {
                anyhow::bail!("cannot reach the database: {cause}")
            }
            Err(StoreError::Unavailable(cause)) => {
                anyhow::bail!(
                    "cannot reach the database (waited {} s): {cause}",
                    started.elapsed().as_secs()
                )
            }
            Err(e) => anyhow::bail!("cannot open the database: {e}"),
        }
    }
}
