//! The JSON-RPC errors of the PCC stream (pcc.md §9.1) and the gRPC statuses that end it (pcc.md §9.2).
//!
//! Owns the wire form of both closed sets, so that each code, message, `data.reason` and status message
//! is written in exactly one place. Unlike the `/mcp` front (`crate::mcp::rpc`), an error whose id is
//! unknown carries `"id":null` (pcc.md §6). It does not decide when an error applies (`crate::pcc::stream`).

use serde_json::{Map, Value};
use tonic::{Code, Status};

use crate::json::to_deterministic_string;
use crate::mcp::rpc::RequestId;

/// Every JSON-RPC error this front writes (pcc.md §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PccError {
    ParseError,
    BatchUnsupported,
    InvalidEnvelope,
    RequestTooLarge,
    NotInitialized,
    AlreadyInitialized,
    CallInFlight,
    RequestUuidMismatch,
    MethodNotFound,
    InvalidParams,
    RunCapacityExhausted,
    Unavailable,
    /// The run's artifacts could not be reserved (traces.md §4.2).
    ArtifactUnavailable,
    Internal,
}

impl PccError {
    fn code(self) -> i64 {
        match self {
            PccError::ParseError => -32700,
            PccError::BatchUnsupported
            | PccError::InvalidEnvelope
            | PccError::RequestTooLarge
            | PccError::NotInitialized
            | PccError::AlreadyInitialized
            | PccError::CallInFlight
            | PccError::RequestUuidMismatch => -32600,
            PccError::MethodNotFound => -32601,
            PccError::InvalidParams => -32602,
            PccError::RunCapacityExhausted => -31999,
            PccError::Unavailable | PccError::ArtifactUnavailable => -31998,
            PccError::Internal => -32603,
        }
    }

    fn message(self) -> &'static str {
        match self {
            PccError::ParseError => "Parse error",
            PccError::BatchUnsupported
            | PccError::InvalidEnvelope
            | PccError::RequestTooLarge
            | PccError::NotInitialized
            | PccError::AlreadyInitialized
            | PccError::CallInFlight
            | PccError::RequestUuidMismatch => "Invalid Request",
            PccError::MethodNotFound => "Method not found",
            PccError::InvalidParams => "Invalid params",
            PccError::RunCapacityExhausted => "Server busy",
            PccError::Unavailable | PccError::ArtifactUnavailable => "Server unavailable",
            PccError::Internal => "Internal error",
        }
    }

    fn reason(self) -> Option<&'static str> {
        match self {
            PccError::BatchUnsupported => Some("batch_unsupported"),
            PccError::InvalidEnvelope => Some("invalid_envelope"),
            PccError::RequestTooLarge => Some("request_too_large"),
            PccError::NotInitialized => Some("not_initialized"),
            PccError::AlreadyInitialized => Some("already_initialized"),
            PccError::CallInFlight => Some("call_in_flight"),
            PccError::RequestUuidMismatch => Some("request_uuid_mismatch"),
            PccError::RunCapacityExhausted => Some("run_capacity_exhausted"),
            PccError::ArtifactUnavailable => Some("artifact_unavailable"),
            PccError::ParseError
            | PccError::MethodNotFound
            | PccError::InvalidParams
            | PccError::Unavailable
            | PccError::Internal => None,
        }
    }

    /// The deterministic response; `id` `None` is written `null` (pcc.md §6).
    pub fn body(self, id: Option<&RequestId>) -> String {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.code()));
        error.insert("message".into(), Value::from(self.message()));
        if let Some(reason) = self.reason() {
            let mut data = Map::new();
            data.insert("reason".into(), Value::from(reason));
            error.insert("data".into(), Value::Object(data));
        }
        let mut response = Map::new();
        response.insert("error".into(), Value::Object(error));
        response.insert("id".into(), id.map_or(Value::Null, RequestId::to_value));
        response.insert("jsonrpc".into(), Value::from("2.0"));
        to_deterministic_string(&Value::Object(response))
    }
}

/// Every status this front ends a stream with on its own (pcc.md §9.2); library statuses (`UNIMPLEMENTED`,
/// oversized or undecodable messages) come from tonic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Ok,
    Unauthorized,
    InvalidMetadata,
    InvalidConnect,
    EmptyMessage,
    ConnectRequired,
    AlreadyConnected,
    UnknownServer,
    StreamCapacityExhausted,
    Draining,
    Unavailable,
    ConnectTimeout,
    IdleTimeout,
    /// The client deadline (`grpc-timeout`) expired (pcc.md §4, §11); see docs/decisions.md for the status.
    ClientDeadline,
    InternalError,
}

impl End {
    /// The gRPC status, with exactly the fixed message of pcc.md §9.2.
    pub fn status(self) -> Status {
        let (code, message) = match self {
            End::Ok => (Code::Ok, ""),
            End::Unauthorized => (Code::Unauthenticated, "unauthorized"),
            End::InvalidMetadata => (Code::InvalidArgument, "invalid_metadata"),
            End::InvalidConnect => (Code::InvalidArgument, "invalid_connect"),
            End::EmptyMessage => (Code::InvalidArgument, "empty_message"),
            End::ConnectRequired => (Code::FailedPrecondition, "connect_required"),
            End::AlreadyConnected => (Code::FailedPrecondition, "already_connected"),
            End::UnknownServer => (Code::NotFound, "unknown_server"),
            End::StreamCapacityExhausted => (Code::ResourceExhausted, "stream_capacity_exhausted"),
            End::Draining => (Code::Unavailable, "draining"),
            End::Unavailable => (Code::Unavailable, "unavailable"),
            End::ConnectTimeout => (Code::DeadlineExceeded, "connect_timeout"),
            End::IdleTimeout => (Code::DeadlineExceeded, "idle_timeout"),
            // pcc.md §9.2 lists no message for it: the client has given up already, and no detail is added.
            End::ClientDeadline => (Code::DeadlineExceeded, ""),
            End::InternalError => (Code::Internal, "internal_error"),
        };
        Status::new(code, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_exact() {
        // pcc.md §17 V14, V16, V18, V27, V40.
        let s = |v: &str| RequestId::String(v.into());
        let cases: Vec<(PccError, Option<RequestId>, &str)> = vec![
            (
                PccError::ParseError,
                None,
                r#"{"error":{"code":-32700,"message":"Parse error"},"id":null,"jsonrpc":"2.0"}"#,
            ),
            (
                PccError::BatchUnsupported,
                None,
                r#"{"error":{"code":-32600,"data":{"reason":"batch_unsupported"},"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}"#,
            ),
            (
                PccError::NotInitialized,
                Some(s("x")),
                r#"{"error":{"code":-32600,"data":{"reason":"not_initialized"},"message":"Invalid Request"},"id":"x","jsonrpc":"2.0"}"#,
            ),
            (
                PccError::MethodNotFound,
                Some(RequestId::Integer(3)),
                r#"{"error":{"code":-32601,"message":"Method not found"},"id":3,"jsonrpc":"2.0"}"#,
            ),
            (
                PccError::RunCapacityExhausted,
                Some(s("call-5")),
                r#"{"error":{"code":-31999,"data":{"reason":"run_capacity_exhausted"},"message":"Server busy"},"id":"call-5","jsonrpc":"2.0"}"#,
            ),
            (
                PccError::Unavailable,
                Some(RequestId::Integer(2)),
                r#"{"error":{"code":-31998,"message":"Server unavailable"},"id":2,"jsonrpc":"2.0"}"#,
            ),
        ];
        for (error, id, expected) in cases {
            assert_eq!(error.body(id.as_ref()), expected, "{error:?}");
        }
    }
}
