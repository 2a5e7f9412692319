//! The rows of the `/mcp` validation table (http-mcp.md §5) as closed codes, and the one debug line every
//! refused request leaves (http-mcp.md §5.1).
//!
//! Owns the names of the rows (`M1`…`M17`, `C1`…`C6`) and the exact form of the refusal line: the row, the
//! HTTP status and the closed reason (the fixed body's code, or the JSON-RPC code). Nothing of the request
//! is logged, no header value, no bearer and no body byte, so the line is safe at `debug` on a shared
//! journal. It does not decide any refusal (the steps do) and does not own the answers' bytes (`refusal`,
//! `rpc`).

use std::fmt;

use hyper::StatusCode;

use crate::mcp::refusal::Refusal;
use crate::mcp::rpc::RpcError;

/// A row of the validation table (http-mcp.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    M1,
    M2,
    M3,
    M4,
    M5,
    M6,
    M7,
    M8,
    M9,
    M10,
    M11,
    M12,
    M13,
    M14,
    M15,
    M16,
    M17,
    C1,
    C2,
    C3,
    C4,
    C6,
}

impl Step {
    /// The row's name as the spec writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::M1 => "M1",
            Step::M2 => "M2",
            Step::M3 => "M3",
            Step::M4 => "M4",
            Step::M5 => "M5",
            Step::M6 => "M6",
            Step::M7 => "M7",
            Step::M8 => "M8",
            Step::M9 => "M9",
            Step::M10 => "M10",
            Step::M11 => "M11",
            Step::M12 => "M12",
            Step::M13 => "M13",
            Step::M14 => "M14",
            Step::M15 => "M15",
            Step::M16 => "M16",
            Step::M17 => "M17",
            Step::C1 => "C1",
            Step::C2 => "C2",
            Step::C3 => "C3",
            Step::C4 => "C4",
            Step::C6 => "C6",
        }
    }

    /// The row that refused a transport check with `refusal` (http-mcp.md §6.2–§6.9).
    pub fn of_refusal(refusal: Refusal) -> Step {
        match refusal {
            Refusal::HeadersTooLarge => Step::M2,
            Refusal::InvalidAuthority => Step::M3,
            Refusal::OriginForbidden => Step::M4,
            Refusal::Unauthorized => Step::M5,
            Refusal::UnsupportedMediaType => Step::M6,
            Refusal::NotAcceptable => Step::M7,
            Refusal::RequestTooLarge | Refusal::RequestTimeout | Refusal::RequestInvalid => Step::M9,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A JSON-RPC refusal and the row that decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub step: Step,
    pub error: RpcError,
}

impl Refused {
    pub fn new(step: Step, error: RpcError) -> Refused {
        Refused { step, error }
    }
}

/// The line's message (http-mcp.md §5.1).
const MESSAGE: &str = "/mcp request refused";

/// Logs a refusal with a fixed `{"error":"<code>"}` body (M1–M9): `step=… status=… reason=<code>`.
pub fn log_fixed(step: Step, status: StatusCode, reason: &'static str) {
    tracing::debug!(step = %step, status = status.as_u16(), reason = %reason, "{MESSAGE}");
}

/// Logs a transport refusal (http-mcp.md §6.2–§6.9).
pub fn log_refusal(refusal: Refusal) {
    log_fixed(Step::of_refusal(refusal), refusal.status(), refusal.code());
}

/// Logs a JSON-RPC refusal: `step=… status=… code=<JSON-RPC code>`.
pub fn log_rpc(step: Step, error: &RpcError) {
    tracing::debug!(step = %step, status = error.status().as_u16(), code = error.code(), "{MESSAGE}");
}

/// Logs the half-close of the body read (http-mcp.md §6.9), which is answered with nothing.
pub fn log_half_closed() {
    tracing::debug!(step = %Step::M9, reason = "half_closed", "{MESSAGE}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_transport_refusal_names_its_row() {
        let rows = [
            (Refusal::HeadersTooLarge, "M2"),
            (Refusal::InvalidAuthority, "M3"),
            (Refusal::OriginForbidden, "M4"),
            (Refusal::Unauthorized, "M5"),
            (Refusal::UnsupportedMediaType, "M6"),
            (Refusal::NotAcceptable, "M7"),
            (Refusal::RequestTooLarge, "M9"),
            (Refusal::RequestTimeout, "M9"),
            (Refusal::RequestInvalid, "M9"),
        ];
        for (refusal, row) in rows {
            assert_eq!(Step::of_refusal(refusal).to_string(), row, "{refusal:?}");
        }
    }
}
