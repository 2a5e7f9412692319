//! The closed failure classes of model calls (models.md §6) and of model-driven missions (models.md §8.5).
//!
//! Owns the wire spelling of every class, its fixed message and whether it is retryable. It does not decide
//! *when* a class applies: the model client (`providers::model`) and the agent loop (`apps::runtime`) do.
//! Here rather than in either because the event records, the Luau runtime and the client name the same
//! classes.

/// One model failure class (models.md §6). Closed: every code that `m:chat` or `handle:agent` returns is one
/// of these, and nothing else of a failed request (status line, body, endpoint) reaches a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelFailure {
    /// The chat table does not make a request (models.md §4.1).
    RequestInvalid,
    /// Provider-call admission had no active or waiting slot (providers.md §9).
    CapacityExhausted,
    /// The domain is fenced or draining, or the model site is closed.
    Unavailable,
    /// `ceilings.timeout_ms` passed before the run's deadline.
    Timeout,
    /// Connecting, TLS, writing or reading failed, or the connection closed early.
    TransportError,
    /// HTTP 401 or 403.
    AuthenticationFailed,
    /// HTTP 429.
    RateLimited,
    /// Any other status but 200.
    UpstreamError,
    /// A 200 whose body is not a Chat Completions answer of models.md §4.3.
    ProtocolError,
    /// The body exceeded the response ceiling (models.md §4.4).
    ResponseTooLarge,
    /// The run was cancelled while the request was in flight (never seen by a script).
    Cancelled,
    /// `handle:agent`: the loop used `max_turns` replies without a final value.
    AgentMaxTurns,
    /// `handle:agent`: a reply that is neither a run nor a final value (models.md §8.4).
    AgentInvalidReply,
}

impl ModelFailure {
    /// Every class, in the order of the models.md §6 table.
    pub const ALL: [ModelFailure; 13] = [
        ModelFailure::RequestInvalid,
        ModelFailure::CapacityExhausted,
        ModelFailure::Unavailable,
        ModelFailure::Timeout,
        ModelFailure::TransportError,
        ModelFailure::AuthenticationFailed,
        ModelFailure::RateLimited,
        ModelFailure::UpstreamError,
        ModelFailure::ProtocolError,
        ModelFailure::ResponseTooLarge,
        ModelFailure::Cancelled,
        ModelFailure::AgentMaxTurns,
        ModelFailure::AgentInvalidReply,
    ];

    /// The class as scripts and records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelFailure::RequestInvalid => "model_request_invalid",
            ModelFailure::CapacityExhausted => "provider_capacity_exhausted",
            ModelFailure::Unavailable => "provider_unavailable",
            ModelFailure::Timeout => "model_timeout",
            ModelFailure::TransportError => "model_transport_error",
            ModelFailure::AuthenticationFailed => "model_authentication_failed",
            ModelFailure::RateLimited => "model_rate_limited",
            ModelFailure::UpstreamError => "model_upstream_error",
            ModelFailure::ProtocolError => "model_protocol_error",
            ModelFailure::ResponseTooLarge => "model_response_too_large",
            ModelFailure::Cancelled => "model_cancelled",
            ModelFailure::AgentMaxTurns => "agent_max_turns",
            ModelFailure::AgentInvalidReply => "agent_invalid_reply",
        }
    }

    /// The fixed message a script receives with the class (models.md §6): never the upstream's text.
    pub fn fixed_message(self) -> &'static str {
        match self {
            ModelFailure::RequestInvalid => "Model request invalid",
            ModelFailure::CapacityExhausted => "Provider capacity exhausted",
            ModelFailure::Unavailable => "Provider unavailable",
            ModelFailure::Timeout => "Model call timed out",
            ModelFailure::TransportError => "Model transport error",
            ModelFailure::AuthenticationFailed => "Model authentication failed",
            ModelFailure::RateLimited => "Model rate limited",
            ModelFailure::UpstreamError => "Model upstream error",
            ModelFailure::ProtocolError => "Model protocol error",
            ModelFailure::ResponseTooLarge => "Model response too large",
            ModelFailure::Cancelled => "Model call cancelled",
            ModelFailure::AgentMaxTurns => "Agent reached max_turns",
            ModelFailure::AgentInvalidReply => "Agent reply invalid",
        }
    }

    /// Whether the same request may succeed if tried again later (models.md §6).
    pub fn retryable(self) -> bool {
        matches!(self, ModelFailure::CapacityExhausted | ModelFailure::RateLimited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // models.md §6: the table of classes, messages and retryability, row by row.
    #[test]
    fn the_classes_are_the_table_of_models_md_section_6() {
        let table: [(&str, &str, bool); 13] = [
            ("model_request_invalid", "Model request invalid", false),
            ("provider_capacity_exhausted", "Provider capacity exhausted", true),
            ("provider_unavailable", "Provider unavailable", false),
            ("model_timeout", "Model call timed out", false),
            ("model_transport_error", "Model transport error", false),
            ("model_authentication_failed", "Model authentication failed", false),
            ("model_rate_limited", "Model rate limited", true),
            ("model_upstream_error", "Model upstream error", false),
            ("model_protocol_error", "Model protocol error", false),
            ("model_response_too_large", "Model response too large", false),
            ("model_cancelled", "Model call cancelled", false),
            ("agent_max_turns", "Agent reached max_turns", false),
            ("agent_invalid_reply", "Agent reply invalid", false),
        ];
        for (class, (code, message, retryable)) in ModelFailure::ALL.iter().zip(table) {
            assert_eq!(
                (class.as_str(), class.fixed_message(), class.retryable()),
                (code, message, retryable)
            );
        }
    }
}

super::serialize_as_str!(ModelFailure);
