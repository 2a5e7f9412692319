//! The closed set of `ptc call` and `ptc list` failures (lifecycle.md §1.2, §1.4, exit 2) and their one-line
//! reasons.
//!
//! Owns the wording of every `ptc call: <reason>` line. A reason is built only from the endpoint, the
//! tool name, status codes, the gateway's fixed error codes and JSON-RPC codes and messages: never from
//! the bearer token, the arguments or a result.

use std::fmt;

/// Which of the two requests a failure belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    List,
    Call,
}

impl Step {
    pub fn method(self) -> &'static str {
        match self {
            Step::List => "tools/list",
            Step::Call => "tools/call",
        }
    }
}

/// Why `ptc call` exits 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The command line is not `ENDPOINT TOOL [--arguments JSON]` as lifecycle.md §1.2 defines it.
    Usage(&'static str),
    /// The command line of `ptc list` is not `ENDPOINT [--json]` (lifecycle.md §1.4).
    ListUsage(&'static str),
    /// `PTC_GATEWAY_TOKEN` is unset.
    TokenMissing,
    /// `PTC_GATEWAY_TOKEN` is set but empty or holds CR, LF or NUL.
    TokenInvalid,
    /// The TCP connection could not be made within 5 s.
    Connect { authority: String, error: std::io::ErrorKind },
    /// Reading or writing the exchange failed after connecting.
    Io { step: Step, error: std::io::ErrorKind },
    /// A status other than 200, with the gateway's fixed `error` code or JSON-RPC error when it had one.
    Status { step: Step, status: u16, detail: Option<String> },
    /// A JSON-RPC error object in a 200 answer.
    Rpc { step: Step, code: i128, message: String },
    /// The listing does not contain the tool.
    UnknownTool(String),
    /// The arguments cannot be mirrored in `Mcp-Param-*` headers (http-mcp.md §9.2).
    Unmirrorable,
    /// Anything the response should have been and was not.
    Malformed { step: Step, what: &'static str },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(what) => write!(f, "usage: {what} (ptc call ENDPOINT TOOL [--arguments JSON])"),
            Failure::ListUsage(what) => write!(f, "usage: {what} (ptc list ENDPOINT [--json])"),
            Failure::TokenMissing => write!(f, "PTC_GATEWAY_TOKEN is not set"),
            Failure::TokenInvalid => write!(f, "PTC_GATEWAY_TOKEN is empty or contains CR, LF or NUL"),
            Failure::Connect { authority, error } => write!(f, "cannot connect to {authority}: {error}"),
            Failure::Io { step, error } => write!(f, "{} exchange failed: {error}", step.method()),
            Failure::Status { step, status, detail: Some(detail) } => {
                write!(f, "{} answered HTTP {status}: {detail}", step.method())
            }
            Failure::Status { step, status, detail: None } => {
                write!(f, "{} answered HTTP {status}", step.method())
            }
            Failure::Rpc { step, code, message } => {
                write!(f, "{} answered JSON-RPC error {code} {message}", step.method())
            }
            Failure::UnknownTool(name) => write!(f, "the gateway serves no tool named {name}"),
            Failure::Unmirrorable => {
                write!(f, "an argument projected to an Mcp-Param header cannot be sent as one")
            }
            Failure::Malformed { step, what } => write!(f, "malformed {} response: {what}", step.method()),
        }
    }
}
