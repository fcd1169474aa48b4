use std::process::ExitCode;

use clap::Parser;

// Requests allocate and free many small objects across two or more threads; mimalloc does it
// in an eighth less of a create's instructions than glibc's malloc (docs/PERFORMANCE.md, "The
// allocator"), and parked awaits stay inside their memory budgets with it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    // reqwest and lettre use rustls without a built-in provider: ring is the one linked.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = match sayso::config::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let args: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            // A harness running `sayso hook <harness>` gets its own deny, whatever went wrong.
            if e.use_stderr()
                && let Some(code) = sayso::hook::usage_error(&args, &e.to_string())
            {
                return ExitCode::from(code);
            }
            let _ = e.print();
            // A usage error of a client command must not read as "expired" (2) to a script.
            return if e.use_stderr() && sayso::client::is_client_invocation(&args) {
                ExitCode::from(sayso::client::EXIT_ERROR)
            } else {
                ExitCode::from(e.exit_code() as u8)
            };
        }
    };
    match sayso::cli::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sayso: {e:#}");
            ExitCode::FAILURE
        }
    }
}
