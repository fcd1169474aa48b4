use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    match sayso::cli::run(sayso::config::Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sayso: {e:#}");
            ExitCode::FAILURE
        }
    }
}
