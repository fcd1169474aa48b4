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
            // A mistyped command line is 64 (EX_USAGE) for every command: clap's own 2 would
            // read as "nobody answered" to a script branching on a client command's code.
            return if e.use_stderr() {
                ExitCode::from(sayso::client::EXIT_USAGE)
            } else {
                ExitCode::from(e.exit_code() as u8)
            };
        }
    };
    if prints_for_a_pipe(&cli) {
        die_quietly_on_a_closed_pipe();
    }
    match sayso::cli::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sayso: {e:#}");
            if sayso::client::is_usage(&e) {
                ExitCode::from(sayso::client::EXIT_USAGE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Commands whose output is read by a person or a pipe (`sayso list | head`). The server, the
/// hook (whose reply a harness reads) and the MCP bridge keep Rust's default: a closed pipe
/// is an error they handle.
fn prints_for_a_pipe(cli: &sayso::config::Cli) -> bool {
    use sayso::config::Command;
    !matches!(
        cli.command,
        None | Some(Command::Serve(_)) | Some(Command::Hook(_)) | Some(Command::Mcp(_))
    )
}

/// Ends the process as other command-line tools end when the reader of their output goes
/// away (`| head`), instead of panicking on the failed write.
fn die_quietly_on_a_closed_pipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: SIG_DFL installs no handler of ours; it is set before any thread of ours writes
    // to stdout. Sockets are unaffected: Rust writes to them with MSG_NOSIGNAL.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}
