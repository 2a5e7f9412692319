//! The process: what `ptc`'s `main` does. It fixes the start reference, reads the systemd target,
//! installs logging, the panic hook and the signal dispositions, parses the arguments, runs the
//! subcommand, and maps every outcome to the exit codes of lifecycle.md §2.2.
//!
//! The top of the module graph: it wires `cli`, `startup` and `call` together and nothing imports it.

use std::io::Write;
use std::process::ExitCode;

use crate::cli::{self, Invocation, USAGE};
use crate::os::{logging, signals};
use crate::startup::{self, StartupCode};

/// Runs the `ptc` process to its exit code.
pub fn main() -> ExitCode {
    // audit-events.md §1.1: the start reference is fixed at process start. A failure here is retried by
    // the stage that needs it, which then reports it.
    let _ = crate::storage::start_ref::start_ref();
    // lifecycle.md §9.1: the systemd target is read once, before any thread exists.
    let notifier = crate::os::notify::Notifier::from_env();
    logging::install();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(_) => return fail_before_start(),
    };
    let status = runtime.block_on(async_main(notifier));
    // Tasks still running (a wedged upstream reader, say) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    ExitCode::from(status)
}

async fn async_main(notifier: crate::os::notify::Notifier) -> u8 {
    let stop = match signals::install() {
        Ok(stop) => stop,
        Err(_) => return print_startup_error(StartupCode::InternalError),
    };
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(_) => return print_startup_error(StartupCode::InternalError),
    };
    match cli::parse(&args, &cwd) {
        Invocation::Help => print_stdout(USAGE),
        Invocation::Version => print_stdout(&format!("ptc {}\n", env!("CARGO_PKG_VERSION"))),
        Invocation::Usage => {
            let _ = std::io::stderr().write_all(USAGE.as_bytes());
            2
        }
        Invocation::GatewayUsageError => print_startup_error(StartupCode::ConfigInvalid),
        Invocation::Gateway(gateway) => startup::run(gateway, stop, notifier).await,
        Invocation::PinUsageError => print_startup_error(StartupCode::ConfigInvalid),
        Invocation::Pin(args) => startup::run_pin(args, stop).await,
        Invocation::CheckUsageError => startup::report_check_usage_error(),
        Invocation::Check(args) => startup::run_check(args, stop).await,
        Invocation::Call(args) => run_call(args, stop).await,
        Invocation::List(args) => run_list(args, stop).await,
        Invocation::Replay(args) => startup::replay::run(args, &cwd, stop).await,
    }
}

/// lifecycle.md §1.2: the blocking client on its own thread, so that SIGINT/SIGTERM (whose handlers are
/// installed for every subcommand, lifecycle.md §8.1) still end it: interrupted, it exits 2 without output.
async fn run_call(args: Vec<std::ffi::OsString>, mut stop: signals::StopRequest) -> u8 {
    let token = std::env::var_os("PTC_GATEWAY_TOKEN");
    let client = tokio::task::spawn_blocking(move || crate::client::run(&args, token));
    tokio::select! {
        result = client => result.unwrap_or(2),
        _ = stop.requested() => {
            let _ = std::io::stderr().write_all(b"ptc call: interrupted\n");
            2
        }
    }
}

/// lifecycle.md §1.4: `ptc list` as `ptc call` runs (its own thread, interrupted: exit 2 without output).
async fn run_list(args: Vec<std::ffi::OsString>, mut stop: signals::StopRequest) -> u8 {
    let token = std::env::var_os("PTC_GATEWAY_TOKEN");
    let client = tokio::task::spawn_blocking(move || crate::client::list::run(&args, token));
    tokio::select! {
        result = client => result.unwrap_or(2),
        _ = stop.requested() => {
            let _ = std::io::stderr().write_all(b"ptc list: interrupted\n");
            2
        }
    }
}

fn print_stdout(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    if out.write_all(text.as_bytes()).and_then(|_| out.flush()).is_ok() {
        0
    } else {
        2
    }
}

/// lifecycle.md §5.1: exactly one line on stderr, exit 78.
fn print_startup_error(code: StartupCode) -> u8 {
    let _ = std::io::stderr().write_all(code.error_line().as_bytes());
    78
}

fn fail_before_start() -> ExitCode {
    ExitCode::from(print_startup_error(StartupCode::InternalError))
}
