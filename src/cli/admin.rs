//! The admin commands on the database `serve` runs on: `key`, `inbox`, `export`, `backup`.

use anyhow::Context;

use super::database::{Links, open};
use super::describe;
use crate::config::{BackupArgs, ExportArgs, InboxArgs, InboxCommand, KeyArgs, KeyCommand};
use crate::service::{ChannelChanges, ExportQuery, ServiceError};

/// `sayso export`: JSON lines on stdout, the count on stderr.
pub(super) async fn run_export(args: ExportArgs) -> anyhow::Result<()> {
    let svc = open(&args.db, None, Links::None).await?;
    use std::io::Write;
    let query = ExportQuery {
        inbox: args.inbox.clone(),
        since: args.since,
        until: args.until,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = svc
        .export(&query, |line| {
            serde_json::to_writer(&mut out, line)?;
            out.write_all(b"\n")
        })
        .await
        .map_err(|e| match e {
            ServiceError::NotFound => {
                anyhow::anyhow!("there is no inbox named {:?}", args.inbox)
            }
            e => describe(e),
        })?;
    out.flush()?;
    eprintln!("exported {written} decision(s) of inbox {:?}", args.inbox);
    Ok(())
}

/// `sayso backup PATH`.
pub(super) async fn run_backup(args: BackupArgs) -> anyhow::Result<()> {
    let svc = open(&args.db, None, Links::None).await?;
    svc.backup_to(&args.path).await.map_err(describe)?;
    eprintln!("backed up to {}", args.path.display());
    Ok(())
}

/// `sayso key …`.
pub(super) async fn run_key(args: KeyArgs) -> anyhow::Result<()> {
    let svc = open(&args.db, None, Links::None).await?;
    match args.command {
        KeyCommand::Create { inbox, urgent } => {
            let (key, _) = svc
                .create_api_key_with(&inbox, urgent)
                .await
                .map_err(|e| match e {
                    ServiceError::NotFound => anyhow::anyhow!("there is no inbox named {inbox:?}"),
                    e => anyhow::anyhow!(e),
                })?;
            println!("{key}");
            Ok(())
        }
        KeyCommand::List { inbox } => {
            let keys = svc.api_keys(&inbox).await.map_err(|e| match e {
                ServiceError::NotFound => anyhow::anyhow!("there is no inbox named {inbox:?}"),
                e => describe(e),
            })?;
            // Times in the machine's zone, as the rest of the command line prints them.
            let zone = crate::render::Zone::system();
            for k in &keys {
                let state = match k.revoked_at {
                    Some(at) => format!("revoked {}", zone.date_time(at)),
                    None => "live".into(),
                };
                let urgent = if k.urgent { "urgent" } else { "not urgent" };
                let made = zone.date_time(k.created_at);
                println!("{}  made {made}  {state}  {urgent}", k.id);
            }
            Ok(())
        }
        KeyCommand::Set { key, urgent } => {
            let key = key_or_stdin(key)?;
            if !svc.set_key_urgent(&key, urgent).await.map_err(describe)? {
                anyhow::bail!(
                    "no live API key matches; give its id from `sayso key list`, or the key"
                );
            }
            let may = if urgent { "may" } else { "may not" };
            println!("the key {may} ask urgent questions");
            Ok(())
        }
        KeyCommand::Revoke { key, all_of } => {
            match (key, all_of) {
                (_, Some(inbox)) => {
                    let n = svc.revoke_inbox_keys(&inbox).await.map_err(|e| match e {
                        ServiceError::NotFound => {
                            anyhow::anyhow!("there is no inbox named {inbox:?}")
                        }
                        e => describe(e),
                    })?;
                    println!("revoked {n} key(s) of inbox {inbox:?}");
                }
                (Some(key), None) => {
                    let key = key_or_stdin(key)?;
                    if !svc.revoke_api_key(&key).await.map_err(describe)? {
                        anyhow::bail!("no live API key matches; it may be revoked already");
                    }
                    println!("revoked");
                }
                (None, None) => anyhow::bail!("give the key to revoke, or --all-of INBOX"),
            }
            Ok(())
        }
    }
}

/// `sayso inbox …`.
pub(super) async fn run_inbox(args: InboxArgs) -> anyhow::Result<()> {
    let printed = match args.command {
        InboxCommand::Create { .. } => Links::Printed,
        InboxCommand::Set { .. } => Links::None,
    };
    let svc = open(&args.db, Some(&args.links), printed).await?;
    match args.command {
        InboxCommand::Create { name, channels } => {
            let tz = channels.tz.clone();
            let inbox = svc
                .create_inbox(&name, channels.email.as_deref().filter(|e| !e.is_empty()))
                .await
                .map_err(describe)?;
            let quota = channels.quota;
            let set = svc
                .set_inbox_channels(&name, &changes(channels))
                .await
                .map_err(describe)?;
            if let Some(quota) = quota {
                svc.set_daily_quota(&name, quota.0)
                    .await
                    .map_err(describe)?;
            }
            if let Some(tz) = tz {
                svc.set_inbox_zone(&name, &tz).await.map_err(describe)?;
            }
            println!("{}", svc.feed_url(&inbox));
            eprintln!(
                "webhook signing secret (for callback_url receivers): {}",
                set.webhook_secret.unwrap_or_default()
            );
            Ok(())
        }
        InboxCommand::Set { name, channels } => {
            let tz = channels.tz.clone();
            if let Some(quota) = channels.quota {
                svc.set_daily_quota(&name, quota.0)
                    .await
                    .map_err(|e| match e {
                        ServiceError::NotFound => {
                            anyhow::anyhow!("there is no inbox named {name:?}")
                        }
                        e => describe(e),
                    })?;
            }
            let set = svc
                .set_inbox_channels(&name, &changes(channels))
                .await
                .map_err(|e| match e {
                    ServiceError::NotFound => anyhow::anyhow!("there is no inbox named {name:?}"),
                    e => describe(e),
                })?;
            let zone = match tz {
                Some(tz) => Some(svc.set_inbox_zone(&name, &tz).await.map_err(describe)?.tz),
                None => None,
            };
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            println!("email:      {}", show(&set.email));
            println!("ntfy_url:   {}", show(&set.ntfy_url));
            println!(
                "ntfy_token: {}",
                if set.ntfy_token.is_some() {
                    "(set)"
                } else {
                    "(none)"
                }
            );
            if let Some(zone) = zone {
                println!("tz:         {}", zone.as_deref().unwrap_or("(none: UTC)"));
            }
            Ok(())
        }
    }
}

fn changes(c: crate::config::ChannelArgs) -> ChannelChanges {
    ChannelChanges {
        email: c.email,
        ntfy_url: c.ntfy_url,
        ntfy_token: c.ntfy_token,
    }
}

/// A key given as `-` is read from stdin, so it stays out of the shell's history and `ps`.
fn key_or_stdin(key: String) -> anyhow::Result<String> {
    if key != "-" {
        return Ok(key);
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("cannot read the key from stdin")?;
    Ok(line)
}
