//! The ordered startup of `ptc gateway` (lifecycle.md §3), its closed error catalog (§4), discovery
//! (pins.md §10), and the serving process around them.

pub mod budget;
pub mod code;
pub mod discovery;
pub mod documents;
pub mod fault;
pub mod listeners;
pub mod serve;
pub mod shutdown;
pub mod templates;

pub use code::StartupCode;

use std::io::Write;

use crate::cli::GatewayArgs;
use crate::config::Mode;
use crate::signals::StopRequest;

/// Runs `ptc gateway` to its exit status (lifecycle.md §2.2).
pub async fn run(args: GatewayArgs, mut stop: StopRequest) -> u8 {
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
                    Ok(Err(code)) => report_failure(code),
                    Err(_panic) => report_failure(StartupCode::InternalError),
                },
            }
        }
        Mode::Serve => run_serve(&args, stop).await,
    }
}

/// Serve mode: startup (abandoned by a stop request, §8.3), then serving and the staged shutdown.
async fn run_serve(args: &GatewayArgs, mut stop: StopRequest) -> u8 {
    let mut held = serve::Held::default();
    let started = {
        let startup =
            futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(serve::start(args, &mut held)));
        tokio::select! {
            biased;
            _ = stop.requested() => None,
            result = startup => Some(match result {
                Ok(result) => result,
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
            // §5.2: release first, then the one line; the status is 78 even if the release was unclean.
            let _ = held.release(Some(code)).await;
            report_failure(code)
        }
        Some(Ok(gateway)) => {
            let trigger = gateway.context().trigger().clone();
            tokio::spawn(async move {
                stop.requested().await;
                trigger.signal();
            });
            gateway.serve_until_stopped().await
        }
    }
}

/// lifecycle.md §5.1: the one stderr line, then exit 78.
pub fn report_failure(code: StartupCode) -> u8 {
    let _ = std::io::stderr().write_all(code.error_line().as_bytes());
    78
}
