//! The closed provider failure classes (providers.md §14) and the per-request dispatch state
//! (providers.md §1).
//!
//! Owns the wire spelling of every class, its fixed message, whether it is retryable and where it can
//! occur (the columns of providers.md §14). It does not decide *when* a class applies: the transport,
//! negotiation and listing code of `providers` do. Here rather than in `providers` because the
//! event records and the application runtime name the same classes.

/// Per upstream request: did any byte of it leave the gateway, and was an answer received (providers.md §1)?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// No byte of the request left the gateway.
    False,
    /// Bytes may have reached the upstream; no answer was received.
    Unknown,
    /// A JSON-RPC response (or HTTP status) was received: delivered, not necessarily succeeded.
    True,
}

impl Dispatch {
    /// The spelling used in results and records: `false`, `unknown`, `true`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dispatch::False => "false",
            Dispatch::Unknown => "unknown",
            Dispatch::True => "true",
        }
    }
}

/// Where a class can occur (the `Where` column of providers.md §14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Acquisition,
    Call,
    Both,
}

/// One provider failure class (providers.md §14). Closed: every code that reaches a mission, an event record
/// or a test is one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureClass {
    McpStdioLauncherUnavailable,
    ProviderAcquisitionTimeout,
    ProviderProtocolVersionUnsupported,
    ProviderProtocolError,
    ProviderToolMissing,
    McpProtocolError,
    McpTransportError,
    McpAuthenticationFailed,
    McpUpstreamError,
    McpTimeout,
    McpCancelled,
    McpTransportBusy,
    ProviderCapacityExhausted,
    ProviderUnavailable,
    McpRequestInvalid,
    McpResultTooLarge,
    McpToolError,
    ToolNotGranted,
    ProviderCleanupFailed,
}

impl FailureClass {
    /// Every class, in the order of the providers.md §14 table.
    pub const ALL: [FailureClass; 19] = [
        FailureClass::McpStdioLauncherUnavailable,
        FailureClass::ProviderAcquisitionTimeout,
        FailureClass::ProviderProtocolVersionUnsupported,
        FailureClass::ProviderProtocolError,
        FailureClass::ProviderToolMissing,
        FailureClass::McpProtocolError,
        FailureClass::McpTransportError,
        FailureClass::McpAuthenticationFailed,
        FailureClass::McpUpstreamError,
        FailureClass::McpTimeout,
        FailureClass::McpCancelled,
        FailureClass::McpTransportBusy,
        FailureClass::ProviderCapacityExhausted,
        FailureClass::ProviderUnavailable,
        FailureClass::McpRequestInvalid,
        FailureClass::McpResultTooLarge,
        FailureClass::McpToolError,
        FailureClass::ToolNotGranted,
        FailureClass::ProviderCleanupFailed,
    ];

    /// The class name: Luau `error.code`, `startup_failed.reason_class` (providers.md §14).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::McpStdioLauncherUnavailable => "mcp_stdio_launcher_unavailable",
            FailureClass::ProviderAcquisitionTimeout => "provider_acquisition_timeout",
            FailureClass::ProviderProtocolVersionUnsupported => "provider_protocol_version_unsupported",
            FailureClass::ProviderProtocolError => "provider_protocol_error",
            FailureClass::ProviderToolMissing => "provider_tool_missing",
            FailureClass::McpProtocolError => "mcp_protocol_error",
            FailureClass::McpTransportError => "mcp_transport_error",
            FailureClass::McpAuthenticationFailed => "mcp_authentication_failed",
            FailureClass::McpUpstreamError => "mcp_upstream_error",
            FailureClass::McpTimeout => "mcp_timeout",
            FailureClass::McpCancelled => "mcp_cancelled",
            FailureClass::McpTransportBusy => "mcp_transport_busy",
            FailureClass::ProviderCapacityExhausted => "provider_capacity_exhausted",
            FailureClass::ProviderUnavailable => "provider_unavailable",
            FailureClass::McpRequestInvalid => "mcp_request_invalid",
            FailureClass::McpResultTooLarge => "mcp_result_too_large",
            FailureClass::McpToolError => "mcp_tool_error",
            FailureClass::ToolNotGranted => "tool_not_granted",
            FailureClass::ProviderCleanupFailed => "provider_cleanup_failed",
        }
    }

    /// The fixed message a mission sees (providers.md §14, §8.3). Acquisition-only classes have none: startup
    /// reports them publicly as `provider_runtime_unavailable`.
    pub fn fixed_message(self) -> Option<&'static str> {
        match self {
            FailureClass::McpStdioLauncherUnavailable
            | FailureClass::ProviderAcquisitionTimeout
            | FailureClass::ProviderProtocolVersionUnsupported
            | FailureClass::ProviderProtocolError
            | FailureClass::ProviderToolMissing => None,
            FailureClass::McpProtocolError => Some("Upstream protocol error"),
            FailureClass::McpTransportError => Some("Upstream transport error"),
            FailureClass::McpAuthenticationFailed => Some("Upstream authentication failed"),
            FailureClass::McpUpstreamError => Some("Upstream rejected the request"),
            FailureClass::McpTimeout => Some("Upstream call timed out"),
            FailureClass::McpCancelled => Some("Upstream call was cancelled"),
            FailureClass::McpTransportBusy => Some("Upstream is busy"),
            FailureClass::ProviderCapacityExhausted => Some("Provider capacity exhausted"),
            FailureClass::ProviderUnavailable => Some("Provider unavailable"),
            FailureClass::McpRequestInvalid => Some("Upstream request could not be formed"),
            FailureClass::McpResultTooLarge => Some("Upstream result too large"),
            FailureClass::McpToolError => Some("Upstream tool reported an error"),
            FailureClass::ToolNotGranted => Some("Tool not granted"),
            FailureClass::ProviderCleanupFailed => Some("Provider cleanup failed"),
        }
    }

    /// Only the two capacity refusals are retryable (providers.md §14): nothing was dispatched and the cause
    /// is load.
    pub fn retryable(self) -> bool {
        matches!(self, FailureClass::McpTransportBusy | FailureClass::ProviderCapacityExhausted)
    }

    /// The `Where` column of providers.md §14.
    pub fn phase(self) -> Phase {
        match self {
            FailureClass::McpStdioLauncherUnavailable
            | FailureClass::ProviderAcquisitionTimeout
            | FailureClass::ProviderProtocolVersionUnsupported
            | FailureClass::ProviderProtocolError
            | FailureClass::ProviderToolMissing => Phase::Acquisition,
            FailureClass::McpProtocolError
            | FailureClass::McpTransportError
            | FailureClass::McpAuthenticationFailed
            | FailureClass::McpUpstreamError => Phase::Both,
            _ => Phase::Call,
        }
    }

    /// The dispatch states a call failure of this class may carry (providers.md §14 `Dispatch` column). Empty
    /// for acquisition-only classes. `mcp_transport_error` is per providers.md §5.3 / §12.1, i.e. any state.
    pub fn allowed_dispatch(self) -> &'static [Dispatch] {
        use Dispatch::{False, True, Unknown};
        match self {
            FailureClass::McpStdioLauncherUnavailable
            | FailureClass::ProviderAcquisitionTimeout
            | FailureClass::ProviderProtocolVersionUnsupported
            | FailureClass::ProviderProtocolError
            | FailureClass::ProviderToolMissing => &[],
            FailureClass::McpProtocolError => &[True, Unknown],
            FailureClass::McpTransportError => &[False, Unknown, True],
            FailureClass::McpTimeout => &[False, Unknown],
            FailureClass::McpCancelled => &[False, Unknown, True],
            FailureClass::ProviderCleanupFailed => &[Unknown],
            FailureClass::McpAuthenticationFailed
            | FailureClass::McpUpstreamError
            | FailureClass::McpResultTooLarge
            | FailureClass::McpToolError => &[True],
            FailureClass::McpTransportBusy
            | FailureClass::ProviderCapacityExhausted
            | FailureClass::ProviderUnavailable
            | FailureClass::McpRequestInvalid
            | FailureClass::ToolNotGranted => &[False],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The providers.md §14 table row by row: (class, name, message, retryable).
    const TABLE: &[(FailureClass, &str, Option<&str>, bool)] = &[
        (FailureClass::McpStdioLauncherUnavailable, "mcp_stdio_launcher_unavailable", None, false),
        (FailureClass::ProviderAcquisitionTimeout, "provider_acquisition_timeout", None, false),
        (
            FailureClass::ProviderProtocolVersionUnsupported,
            "provider_protocol_version_unsupported",
            None,
            false,
        ),
        (FailureClass::ProviderProtocolError, "provider_protocol_error", None, false),
        (FailureClass::ProviderToolMissing, "provider_tool_missing", None, false),
        (FailureClass::McpProtocolError, "mcp_protocol_error", Some("Upstream protocol error"), false),
        (FailureClass::McpTransportError, "mcp_transport_error", Some("Upstream transport error"), false),
        (
            FailureClass::McpAuthenticationFailed,
            "mcp_authentication_failed",
            Some("Upstream authentication failed"),
            false,
        ),
        (FailureClass::McpUpstreamError, "mcp_upstream_error", Some("Upstream rejected the request"), false),
        (FailureClass::McpTimeout, "mcp_timeout", Some("Upstream call timed out"), false),
        (FailureClass::McpCancelled, "mcp_cancelled", Some("Upstream call was cancelled"), false),
        (FailureClass::McpTransportBusy, "mcp_transport_busy", Some("Upstream is busy"), true),
        (
            FailureClass::ProviderCapacityExhausted,
            "provider_capacity_exhausted",
            Some("Provider capacity exhausted"),
            true,
        ),
        (FailureClass::ProviderUnavailable, "provider_unavailable", Some("Provider unavailable"), false),
        (
            FailureClass::McpRequestInvalid,
            "mcp_request_invalid",
            Some("Upstream request could not be formed"),
            false,
        ),
        (FailureClass::McpResultTooLarge, "mcp_result_too_large", Some("Upstream result too large"), false),
        (FailureClass::McpToolError, "mcp_tool_error", Some("Upstream tool reported an error"), false),
        (FailureClass::ToolNotGranted, "tool_not_granted", Some("Tool not granted"), false),
        (
            FailureClass::ProviderCleanupFailed,
            "provider_cleanup_failed",
            Some("Provider cleanup failed"),
            false,
        ),
    ];

    #[test]
    fn every_class_matches_the_table() {
        assert_eq!(TABLE.len(), FailureClass::ALL.len());
        for ((class, name, message, retryable), listed) in TABLE.iter().zip(FailureClass::ALL) {
            assert_eq!(*class, listed);
            assert_eq!(class.as_str(), *name);
            assert_eq!(class.fixed_message(), *message);
            assert_eq!(class.retryable(), *retryable);
            assert_eq!(class.phase() == Phase::Acquisition, message.is_none(), "{name}");
            assert_eq!(class.allowed_dispatch().is_empty(), message.is_none(), "{name}");
        }
    }
}

super::serialize_as_str!(Dispatch, FailureClass);
