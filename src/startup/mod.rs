//! The ordered startup of `ptc gateway` (lifecycle.md §3), discovery (pins.md §10), and the serving
//! process around them: the top layer, which wires every other module together and which no module
//! below it imports.
//!
//! It reports the closed catalog of pins.md §4 but does not own it (`crate::codes::startup`), nor the fault
//! points of the tests (`crate::support::fault`).

pub mod budget;
pub mod check;
pub mod credentials_owner;
pub mod discovery;
pub mod documents;
pub mod gateway;
pub mod listeners;
pub mod pin;
pub mod pools;
pub mod providers;
pub(crate) mod refusal_facts;
pub mod release;
pub mod replay;
pub mod serve;
pub mod shutdown;
pub mod templates;
pub mod watchdog;

// The startup catalog and the fault points live in leaf modules so that every layer below startup can
// name them; these re-exports keep startup's own paths.
pub use crate::codes::StartupCode;
pub(crate) use crate::support::fault;

use std::io::Write;

use crate::cli::GatewayArgs;
use crate::config::Mode;
use crate::explain::{Fact, Refusal};
use crate::os::notify::{self, Message, Notifier, Status};
use crate::os::signals::StopRequest;

/// Runs `ptc gateway` to its exit status (lifecycle.md §2.2). `notifier` is the systemd target captured
/// at process start (lifecycle.md §9.1).
pub async fn run(args: GatewayArgs, mut stop: StopRequest, notifier: Notifier) -> u8 {
    let probe = watchdog::Probe::default();
    watchdog::spawn(notifier.clone(), notify::watchdog_interval_from_env(), probe.clone());
    match args.mode {
        Mode::Discovery => {
            let discovery =
                futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(discovery::run(&args)));
            tokio::select! {
                biased;
                // pins.md §10.4 / lifecycle.md §8.4: an interrupted discovery prints nothing and exits 70.
                _ = stop.requested() => 70,
                result = discovery => match result {
                    Ok(Ok(())) => 0,
                    Ok(Err(refusal)) => report_explained_failure(&refusal),
                    Err(_panic) => report_failure(StartupCode::InternalError),
                },
            }
        }
        Mode::Serve => run_serve(&args, stop, notifier, probe).await,
    }
}

/// `ptc pin` (lifecycle.md §1.3) to its exit status: 0 with one line per changed pin member, 78 with the
/// startup line of a refusal (nothing written), 70 when interrupted (nothing written).
pub async fn run_pin(args: GatewayArgs, mut stop: StopRequest) -> u8 {
    let pinned = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(pin::run(&args)));
    tokio::select! {
        biased;
        _ = stop.requested() => 70,
        result = pinned => match result {
            Ok(Ok(lines)) => {
                let mut out = std::io::stdout().lock();
                let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
                if out.write_all(text.as_bytes()).and_then(|_| out.flush()).is_ok() { 0 } else { 70 }
            }
            Ok(Err(refusal)) => report_explained_failure(&refusal),
            Err(_panic) => report_failure(StartupCode::InternalError),
        },
    }
}

/// `ptc check` (lifecycle.md §1.5) to its exit status: 0 when serving would start, 78 with the explained
/// refusal, 70 when interrupted (nothing printed). Everything goes to stdout: the reader is a person.
pub async fn run_check(args: GatewayArgs, mut stop: StopRequest) -> u8 {
    let checked = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(check::run(&args)));
    let outcome = tokio::select! {
        biased;
        _ = stop.requested() => return 70,
        result = checked => match result {
            Ok(outcome) => outcome,
            Err(_panic) => Err(StartupCode::InternalError.into()),
        },
    };
    let status = if outcome.is_ok() { 0 } else { 78 };
    let mut out = std::io::stdout().lock();
    match out.write_all(check::render(&outcome).as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => status,
        Err(_) => 70,
    }
}

/// `ptc check` with bad arguments: `config_invalid` at stage 0, explained like any refusal, exit 78.
pub fn report_check_usage_error() -> u8 {
    let refusal = Refusal::new(StartupCode::ConfigInvalid)
        .with(Fact::Stage, "0 arguments")
        .with(Fact::Reason, "usage: ptc check CONFIG [--env-file FILE]");
    let outcome = Err(refusal);
    let _ = std::io::stdout().write_all(check::render(&outcome).as_bytes());
    78
}

/// Serve mode: startup (abandoned by a stop request, lifecycle.md §8.3), then serving and the staged
/// shutdown.
async fn run_serve(
    args: &GatewayArgs,
    mut stop: StopRequest,
    notifier: Notifier,
    probe: watchdog::Probe,
) -> u8 {
    notifier.send(&[Message::Status(Status::Starting)]);
    let mut held = serve::Startup::default();
    let started = {
        let startup =
            futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(serve::start(args, &mut held)));
        tokio::select! {
            biased;
            _ = stop.requested() => None,
            result = startup => Some(match result {
                Ok(Err(refusal)) => {
                    log_refusal(&refusal);
                    Err(refusal.code)
                }
                Ok(Ok(gateway)) => Ok(gateway),
                Err(_panic) => Err(StartupCode::InternalError),
            }),
        }
    };
    match started {
        // lifecycle.md §8.3: a stop during startup releases what exists and prints nothing.
        None => {
            if held.release(None).await {
                0
            } else {
                70
            }
        }
        Some(Err(code)) => {
            // lifecycle.md §5.2: release first, then the one line; the status is 78 even if the release was
            // unclean.
            let _ = held.release(Some(code)).await;
            report_failure(code)
        }
        Some(Ok(gateway)) => {
            // lifecycle.md §9.1: stage 12 has run, every listener is bound and readiness is true.
            // lifecycle.md §8.3: a stop that abandoned startup (the `None` arm) never gets here, so it never
            // sends READY=1.
            notifier.send(&[Message::Ready, Message::Status(Status::Ready)]);
            // The documents are loaded and dropped: their definitions and the free heap startup leaves
            // behind go back to the kernel (docs/decisions.md "The quickstart's idle memory (issue 27)").
            crate::config::schema::release();
            crate::os::memory::return_free_heap();
            probe.register(gateway.domain().clone());
            let trigger = gateway.context().trigger().clone();
            tokio::spawn(async move {
                stop.requested().await;
                trigger.signal();
            });
            // lifecycle.md §7.5: a panic in the orchestration itself (not in a stage hook, which only
            // makes its stage unclean) leaves no stage to run: every child process group is killed and
            // the exit is 70.
            let serving = std::panic::AssertUnwindSafe(gateway.serve_until_stopped_with(notifier));
            match futures::FutureExt::catch_unwind(serving).await {
                Ok(code) => code,
                Err(_panic) => {
                    tracing::error!("the shutdown orchestration panicked; killing every child process group");
                    crate::providers::child::kill_every_group();
                    70
                }
            }
        }
    }
}

/// lifecycle.md §5.1: the one stderr line, then exit 78.
pub fn report_failure(code: StartupCode) -> u8 {
    let _ = std::io::stderr().write_all(code.error_line().as_bytes());
    78
}

/// Serve mode's refusal for the human log, at info level (lifecycle.md §1.5): the code and the facts on one
/// line, without the excerpt, whose two lines do not fit one (the reason has the position).
fn log_refusal(refusal: &Refusal) {
    let facts: Vec<String> = refusal
        .facts
        .iter()
        .filter(|(k, _)| **k != Fact::Excerpt)
        .map(|(k, v)| format!("{}: {v}", k.as_str()))
        .collect();
    tracing::info!(code = refusal.code.as_str(), facts = %facts.join("; "), "startup refused");
}

/// `ptc pin` and `--print-pins` (lifecycle.md §1.3, pins.md §10.4): the stderr line of lifecycle.md §5.1
/// for a machine, then, for the person who ran the command, the refusal explained as `ptc check` explains
/// it (lifecycle.md §1.5), then exit 78.
pub(crate) fn report_explained_failure(refusal: &Refusal) -> u8 {
    let mut text = refusal.code.error_line();
    text.push_str(&check::render(&Err(refusal.clone())));
    let _ = std::io::stderr().write_all(text.as_bytes());
    78
}
