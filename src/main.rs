use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    // reqwest and lettre use rustls without a built-in provider: ring is the one linked.
    let _ = rustls::crypto::ring::default_provider().install_default();
    match sayso::cli::run(sayso::config::Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sayso: {e:#}");
            ExitCode::FAILURE
        }
    }
}
