//! Running the commands of `config::Cli`: `serve` and the admin commands.

pub(crate) mod first_run;

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::net::TcpListener;

use crate::app::{self, ServerSettings, serve, serve_router, shutdown_signal};
use crate::client;
use crate::config::{
    Cli, Command, GlobalArgs, InboxCommand, KeyCommand, LogFormat, PersonArgs, PersonCommand,
    ServeArgs,
};
use crate::domain::people::Person;
use crate::service::{
    ChannelChanges, ExportQuery, PersonSettings, Service, ServiceError, ServiceSettings,
};
use crate::storage::{self, Store, StoreError};

/// Runs the command the user asked for.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    init_logging(&cli.global);
    match cli.command {
        None => run_server(&cli.global, ServeArgs::default()).await,
        Some(Command::Serve(args)) => run_server(&cli.global, args).await,
        Some(Command::Export(args)) => {
            use std::io::Write;
            let svc = open(&cli.global).await?;
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
        Some(Command::Backup { path }) => {
            let svc = open(&cli.global).await?;
            svc.backup_to(&path).await.map_err(describe)?;
            eprintln!("backed up to {}", path.display());
            Ok(())
        }
        Some(Command::Health { url }) => {
            let url = url.unwrap_or_else(|| client::health::local_url(cli.global.listen));
            client::health::check(&url).await
        }
        Some(Command::Config(_)) => {
            let argv = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
            for line in crate::config::variables::effective(argv)? {
                println!("{line}");
            }
            for line in crate::config::variables::unknown_in_environment() {
                eprintln!("warning: {line}");
            }
            Ok(())
        }
        Some(Command::Key(KeyCommand::Create { inbox, urgent })) => {
            let svc = open(&cli.global).await?;
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
        Some(Command::Key(KeyCommand::List { inbox })) => {
            let svc = open(&cli.global).await?;
            let keys = svc.api_keys(&inbox).await.map_err(|e| match e {
                ServiceError::NotFound => anyhow::anyhow!("there is no inbox named {inbox:?}"),
                e => describe(e),
            })?;
            for k in &keys {
                let state = match k.revoked_at {
                    Some(at) => format!("revoked {}", crate::render::iso(at)),
                    None => "live".into(),
                };
                let urgent = if k.urgent { "urgent" } else { "not urgent" };
                let made = crate::render::iso(k.created_at);
                println!("{}  made {made}  {state}  {urgent}", k.id);
            }
            Ok(())
        }
        Some(Command::Key(KeyCommand::Set { key, urgent })) => {
            let svc = open(&cli.global).await?;
            let key = if key == "-" {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .context("cannot read the key from stdin")?;
                line
            } else {
                key
            };
            if !svc.set_key_urgent(&key, urgent).await.map_err(describe)? {
                anyhow::bail!(
                    "no live API key matches; give its id from `sayso key list`, or the key"
                );
            }
            let may = if urgent { "may" } else { "may not" };
            println!("the key {may} ask urgent questions");
            Ok(())
        }
        Some(Command::Key(KeyCommand::Revoke { key, all_of })) => {
            let svc = open(&cli.global).await?;
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
                    let key = if key == "-" {
                        let mut line = String::new();
                        std::io::stdin()
                            .read_line(&mut line)
                            .context("cannot read the key from stdin")?;
                        line
                    } else {
                        key
                    };
                    if !svc.revoke_api_key(&key).await.map_err(describe)? {
                        anyhow::bail!("no live API key matches; it may be revoked already");
                    }
                    println!("revoked");
                }
                (None, None) => anyhow::bail!("give the key to revoke, or --all-of INBOX"),
            }
            Ok(())
        }
        Some(Command::Inbox(InboxCommand::Create { name, channels })) => {
            let svc = open(&cli.global).await?;
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
            println!("{}", svc.feed_url(&inbox));
            eprintln!(
                "webhook signing secret (for callback_url receivers): {}",
                set.webhook_secret.unwrap_or_default()
            );
            Ok(())
        }
        Some(Command::Inbox(InboxCommand::Set { name, channels })) => {
            let svc = open(&cli.global).await?;
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
            Ok(())
        }
        Some(Command::Person(cmd)) => run_person(&cli.global, cmd).await,

        // The client commands (src/client) end the process with their own exit codes.
        Some(Command::Ask(args)) => client::exit(client::ask(args).await),
        Some(Command::Get(args)) => client::exit(client::get(args).await),
        Some(Command::Await(args)) => client::exit(client::await_decision(args).await),
        Some(Command::Cancel(args)) => client::exit(client::cancel(args).await),
        Some(Command::Todo(args)) => client::exit(client::todo(args).await),
        Some(Command::Hook(cmd)) => crate::hook::run(cmd).await,
        // --- MCP stdio bridge ---
        Some(Command::Mcp(args)) => crate::mcp::bridge::run(&args.server, &args.key, &args.profile)
            .await
            .map_err(anyhow::Error::msg),
        // --- end MCP stdio bridge ---
    }
}

fn changes(c: crate::config::ChannelArgs) -> ChannelChanges {
    ChannelChanges {
        email: c.email,
        ntfy_url: c.ntfy_url,
        ntfy_token: c.ntfy_token,
    }
}

/// `sayso person …`: what it prints goes to stdout, links alone on their line.
async fn run_person(global: &GlobalArgs, cmd: PersonCommand) -> anyhow::Result<()> {
    let svc = open(global).await?;
    // Unknown inboxes are the one `NotFound`; every other refusal says what it is.
    let fail = |inbox: &str| {
        let inbox = inbox.to_string();
        move |e: ServiceError| match e {
            ServiceError::NotFound => anyhow::anyhow!("there is no inbox named {inbox:?}"),
            ServiceError::Validation(issues) => anyhow::anyhow!(
                "{}",
                issues
                    .into_iter()
                    .map(|i| i.message)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            e => describe(e),
        }
    };
    match cmd {
        PersonCommand::Add {
            name,
            inbox,
            settings,
        } => {
            let (_, link) = svc
                .add_person(&inbox, &name, &person_settings(settings))
                .await
                .map_err(fail(&inbox))?;
            println!("{link}");
        }
        PersonCommand::List { inbox } => {
            let people = svc.list_people(&inbox).await.map_err(fail(&inbox))?;
            for line in people_table(&people) {
                println!("{line}");
            }
        }
        PersonCommand::Set {
            name,
            inbox,
            settings,
        } => {
            let p = svc
                .set_person(&inbox, &name, &person_settings(settings))
                .await
                .map_err(fail(&inbox))?;
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            let own = if p.is_inbox_own() {
                " (the inbox's own)"
            } else {
                ""
            };
            println!("name:       {}{own}", p.name);
            println!("email:      {}", show(&p.email));
            println!("ntfy_url:   {}", show(&p.ntfy_url));
            println!(
                "ntfy_token: {}",
                if p.ntfy_token.is_some() {
                    "(set)"
                } else {
                    "(none)"
                }
            );
            println!("quiet:      {}", show(&quiet_hours(&p)));
        }
        PersonCommand::Remove { name, inbox } => {
            svc.remove_person(&inbox, &name)
                .await
                .map_err(fail(&inbox))?;
            println!("removed {name:?} from the inbox {inbox:?}");
        }
        PersonCommand::Link { name, inbox } => {
            let link = svc
                .person_feed_url(&inbox, &name)
                .await
                .map_err(fail(&inbox))?;
            println!("{link}");
        }
        PersonCommand::Passkeys(args) => {
            let inbox = args.inbox.clone();
            for line in person_passkeys(&svc, args).await.map_err(fail(&inbox))? {
                println!("{line}");
            }
        }
    }
    Ok(())
}

/// `sayso person passkeys`: one line per passkey (id, added, last used, browser), or the
/// one removed.
async fn person_passkeys(
    svc: &Service,
    args: crate::config::passkeys::PersonPasskeysArgs,
) -> Result<Vec<String>, ServiceError> {
    use crate::domain::webauthn::ID_PREFIX_CHARS;
    let short = |id: &str| id.chars().take(ID_PREFIX_CHARS).collect::<String>();
    let (name, inbox) = (&args.name, &args.inbox);
    if let Some(id) = &args.remove {
        let removed = svc.remove_person_passkey(inbox, name, id).await?;
        return Ok(vec![format!(
            "removed the passkey {} of {name:?} (inbox {inbox:?})",
            short(&removed.credential_id)
        )]);
    }
    let passkeys = svc.person_passkeys(inbox, name).await?;
    if passkeys.is_empty() {
        return Ok(vec![format!("{name:?} has no passkey")]);
    }
    Ok(passkeys
        .iter()
        .map(|p| {
            let used = p.last_used_at.map_or("never used".to_string(), |t| {
                format!("last used {}", crate::render::format_time(t))
            });
            format!(
                "{}  added {}  {used}  {}",
                short(&p.credential_id),
                crate::render::format_time(p.added_at),
                p.user_agent.as_deref().unwrap_or("(browser unknown)")
            )
        })
        .collect())
}

fn person_settings(a: PersonArgs) -> PersonSettings {
    PersonSettings {
        email: a.email,
        ntfy_url: a.ntfy_url,
        ntfy_token: a.ntfy_token,
        quiet: a.quiet,
        tz: a.tz,
    }
}

/// "22:00-07:00 Europe/Berlin".
fn quiet_hours(p: &Person) -> Option<String> {
    p.quiet.as_ref().map(|q| format!("{} {}", q.window(), q.tz))
}

/// One line per person, in aligned columns: name, email, ntfy topic, quiet hours, `-` for
/// what they have not, and which one is the inbox's own.
fn people_table(people: &[Person]) -> Vec<String> {
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let rows: Vec<[String; 5]> = people
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                dash(p.email.clone()),
                dash(p.ntfy_url.clone()),
                dash(quiet_hours(p)),
                if p.is_inbox_own() {
                    "(the inbox's own)".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let mut widths = [0; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', w - cell.chars().count()));
            }
            line.trim_end().to_string()
        })
        .collect()
}

async fn run_server(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<()> {
    for line in crate::config::variables::unknown_in_environment() {
        tracing::warn!("{line}");
    }
    let listener = app::listen(global.listen)
        .with_context(|| format!("cannot listen on {}", global.listen))?;
    let bound = listener.local_addr()?;
    // Links are built from the address actually bound (port 0 picks one) unless
    // SAYSO_PUBLIC_URL says otherwise.
    let global = &GlobalArgs {
        listen: bound,
        ..global.clone()
    };
    let settings = ServerSettings::from_args(global, &args).map_err(anyhow::Error::msg)?;
    let store = connect_waiting(&global.database_url, Duration::from_secs(args.db_wait_s)).await?;
    let svc = Service::new(store, settings.service)
        .await
        .map_err(describe)?;
    first_run(&svc, global, &args).await?;
    if let Some((address, token)) = &settings.metrics_listener {
        let metrics = TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address} (SAYSO_METRICS_LISTEN)"))?;
        tracing::info!(address = %metrics.local_addr()?, "metrics are served");
        let app = crate::http::metrics_only(svc.clone(), token);
        let limits = settings.app.limits.clone();
        tokio::spawn(serve_router(metrics, app, limits, shutdown_signal(), || ()));
    }
    svc.start_background();
    app::start_worker(&svc, &settings.notify)?;
    tracing::info!(address = %bound, public_url = %svc.settings().public_url, "sayso is listening");
    serve(listener, svc, settings.app, shutdown_signal()).await;
    Ok(())
}

/// On an empty database, makes the inbox `default` and writes its secrets to the first run's
/// file; they reach stdout only on a terminal, and the log only says where the file is.
/// The file's directory is checked before anything is made, so a refusal leaves the database
/// empty and the next start tries again.
async fn first_run(svc: &Service, global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<()> {
    if !svc.first_run_pending().await.map_err(describe)? {
        return Ok(());
    }
    let dir = first_run::state_dir(args.state_dir.as_deref(), &global.database_url);
    let file = match first_run::prepare(&dir) {
        Ok(file) => file,
        // Another replica's first run, in the same directory, has just written it.
        Err(first_run::Unusable::Exists(_))
            if !svc.first_run_pending().await.map_err(describe)? =>
        {
            return Ok(());
        }
        Err(e) => anyhow::bail!("{e}"),
    };
    let Some(first) = svc.first_run().await.map_err(describe)? else {
        return Ok(());
    };
    first_run::write(&file, &first).with_context(|| {
        format!(
            "the first run made the inbox \"{0}\" but could not save its secrets, and printed \
             none. `sayso key create --inbox {0}` makes a new API key, and `sayso person link \
             {0} --inbox {0}` prints the feed link",
            first.inbox.name
        )
    })?;
    tracing::info!(
        inbox = %first.inbox.name,
        file = %file.display(),
        "first run: the inbox's API key, feed link and webhook signing secret are in this file \
         (mode 0600), never in the log; read it, then delete it"
    );
    if std::io::stdout().is_terminal() {
        println!(
            "{}\n  (also in {}, mode 0600: delete it once you have kept them)\n",
            first_run::banner(&first),
            file.display()
        );
    }
    Ok(())
}

/// Connects to the database and opens the service on it, for an admin command.
async fn open(global: &GlobalArgs) -> anyhow::Result<Service> {
    let store = connect_waiting(&global.database_url, Duration::ZERO).await?;
    let settings = ServiceSettings {
        public_url: global.public_url().map_err(anyhow::Error::msg)?,
        max_await: Duration::from_secs(600),
        expiry_interval: Duration::from_secs(1),
        email_enabled: false,
        allow_private_webhooks: false,
        retention: None,
        urgent_per_hour: 0,
    };
    Service::new(store, settings).await.map_err(describe)
}

/// Connects to the database; while it cannot be reached, retries for up to `wait` (a server
/// started with its database, or just before it, waits for it instead of exiting at once).
async fn connect_waiting(url: &str, wait: Duration) -> anyhow::Result<Arc<dyn Store>> {
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

fn describe(e: ServiceError) -> anyhow::Error {
    match e {
        ServiceError::Validation(issues) => anyhow::anyhow!(
            "{}",
            issues
                .iter()
                .map(|i| format!("{}: {}", i.path, i.message))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        e => anyhow::anyhow!(e),
    }
}

fn init_logging(global: &GlobalArgs) {
    let filter = tracing_subscriber::EnvFilter::try_new(&global.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only on a terminal: a log file, journald or `docker logs` would keep the escape
    // codes as text (and formatting them cost every request's span a tenth of its time).
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = match global.log_format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
