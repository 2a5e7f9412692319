//! Stages 1–3 (lifecycle.md §3.2): the gateway document, the host document and, in serve mode, the
//! bearer binding. Both modes share them; discovery skips stage 3 (pins.md §10.1).

use crate::cli::GatewayArgs;
use crate::config::gateway::GatewayConfig;
use crate::config::host::HostConfig;
use crate::config::{gateway, host, Mode};
use crate::explain::Refusal;

/// The two documents, validated and normalised.
#[derive(Debug)]
pub struct Documents {
    pub gateway: GatewayConfig,
    pub host: HostConfig,
}

/// Runs stages 1, 2 and (serve mode) 3.
pub fn load(args: &GatewayArgs) -> Result<Documents, Refusal> {
    let gateway = gateway::load(&args.config, args.mode)?;
    let host = host::load(&gateway.host_path, &gateway.bearer_binding)?;
    if args.mode == Mode::Serve {
        host::check_bearer_binding(&host, &gateway.bearer_binding)?;
    }
    Ok(Documents { gateway, host })
}
