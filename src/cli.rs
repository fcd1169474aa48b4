//! Running the commands of `config::Cli`: `serve` and the admin commands.
//!
//! Uses every room below it (docs/ARCHITECTURE.md, checked by tests/layers.rs).

mod admin;
mod database;
pub(crate) mod first_run;
mod people;
mod qr;
mod variables;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::app::{self, ServerSettings, serve, serve_router, shutdown_signal};
use crate::client;
use crate::config::{Cli, Command, GlobalArgs, LogFormat, ServeArgs};
use crate::service::{Service, ServiceError};
use database::{PUBLIC_URL_SETTING, connect_waiting};

/// Runs the command the user asked for.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    // `serve` has the log flags of its own; every other command reads SAYSO_LOG* alone.
    match &cli.command {
        Some(Command::Serve(args)) => init_logging(&args.global),
        _ => init_logging(&cli.global),
    }
    match cli.command {
        None => run_server(&cli.global, ServeArgs::default()).await,
        Some(Command::Serve(args)) => run_server(&args.global.clone(), args).await,
        Some(Command::Config(args)) => {
            let argv = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
            for line in variables::effective(argv)? {
                println!("{line}");
            }
            let unknown = variables::unknown_in_environment();
            for line in unknown.iter().chain(&args.global.reach_warnings()) {
                eprintln!("warning: {line}");
            }
            Ok(())
        }
        Some(Command::Health { url }) => {
            let url = url.unwrap_or_else(|| client::health::local_url(cli.global.listen));
            client::health::check(&url).await
        }
        Some(Command::Export(args)) => admin::run_export(args).await,
        Some(Command::Backup(args)) => admin::run_backup(args).await,
        Some(Command::Key(args)) => admin::run_key(args).await,
        Some(Command::Inbox(args)) => admin::run_inbox(args).await,
        Some(Command::Person(args)) => people::run_person(args).await,

        // The client commands (src/client) end the process with their own exit codes.
        Some(Command::Ask(args)) => client::exit(client::ask(args).await),
        Some(Command::Get(args)) => client::exit(client::get(args).await),
        Some(Command::Await(args)) => client::exit(client::await_decision(args).await),
        Some(Command::Cancel(args)) => client::exit(client::cancel(args).await),
        Some(Command::Todo(args)) => client::exit(client::todo(args).await),
        Some(Command::List(args)) => client::exit(client::list(args).await),
        Some(Command::Receipts(args)) => client::exit(client::receipts(args).await),
        Some(Command::Verify(args)) => client::exit(client::verify_file(args).await),
        Some(Command::Allowances(args)) => client::exit(client::allowances(args).await),
        Some(Command::Hook(cmd)) => crate::hook::run(cmd).await,
        // --- MCP stdio bridge ---
        Some(Command::Mcp(args)) => {
            let key = client::http::required_key(args.server.key.as_deref())?;
            crate::mcp::bridge::run(&args.server.server, &key, &args.profile)
                .await
                .map_err(anyhow::Error::msg)
        } // --- end MCP stdio bridge ---
    }
}

async fn run_server(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<()> {
    for line in variables::unknown_in_environment() {
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
    for line in global.reach_warnings() {
        tracing::warn!("{line}");
    }
    let settings = ServerSettings::from_args(global, &args).map_err(anyhow::Error::msg)?;
    let store = connect_waiting(&global.database_url, Duration::from_secs(args.db_wait_s)).await?;
    // The admin commands build their links from it (the last replica started wins).
    store
        .put_setting(PUBLIC_URL_SETTING, &settings.service.public_url)
        .await
        .map_err(|e| anyhow::anyhow!("cannot record the public URL: {e}"))?;
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

/// On an empty database, makes the inbox `default` with the user as its own person, and
/// writes its secrets to the first run's file; they reach stdout only on a terminal (with the
/// feed link as a QR code), and the log only says where the file is.
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
    let person = first_run::own_person_name(first_run::may_ask());
    let Some(first) = svc.first_run(&person).await.map_err(describe)? else {
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
        // The feed link for a phone's camera; a screen only, never the file or a log. A link
        // on loopback opens on this machine alone: a code of it would open nothing.
        let on_loopback =
            url::Url::parse(&first.feed_url).is_ok_and(|u| crate::domain::origin::is_loopback(&u));
        if on_loopback {
            println!(
                "  The feed link opens on this machine only. For your phone: README.md, \"Answer \
                 from your phone\" (a Telegram bot rings it in 5 minutes), then `sayso person \
                 link {} --qr`.\n",
                first.person
            );
        } else if let Some(code) = qr::render(&first.feed_url) {
            println!("  The feed link, for your phone's camera:\n\n{code}");
        }
        println!(
            "  Is this you? `sayso person rename {} NEW` changes your name.\n",
            first.person
        );
    }
    Ok(())
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
