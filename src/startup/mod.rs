//! The ordered startup of `ptc gateway` (lifecycle.md §3), its closed error catalog (§4), discovery
//! (pins.md §10), and the serving process around them.

pub mod budget;
pub mod code;
pub mod discovery;
pub mod documents;
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
        Mode::Serve => report_failure(StartupCode::InternalError),
    }
}

/// lifecycle.md §5.1: the one stderr line, then exit 78.
pub fn report_failure(code: StartupCode) -> u8 {
    let _ = std::io::stderr().write_all(code.error_line().as_bytes());
    78
}
