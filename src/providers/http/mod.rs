//! The Streamable HTTP upstream client (providers.md §5, §6.2–§6.3 over HTTP,
//! providers.md §7, §8, §10.1, §11, §12.1, §13.1): an acquisition's own connection pool, request headers,
//! response classification, the event-stream reader, the legacy session with its re-initialisation,
//! acquisition, calls with cancellation per era, and the orderly close.
//!
//! The API mirrors the stdio layer: [`acquire::acquire_http`] returns an [`acquire::HttpAcquired`] with
//! the transport and the providers.md §7.4 facts; [`transport::HttpTransport::call`] takes the same
//! [`CallRequest`](super::provider_call::CallRequest) and returns the same
//! [`CallOutcome`](super::provider_call::CallOutcome); `close`, `events` and `counters` return the stdio
//! types. It reuses `negotiate`, `listing`, `result` and `framing` rather than copying them. It does not
//! own provider-call admission, readiness or event records.

pub mod acquire;
pub mod endpoint;
pub mod exchange;
pub mod handshake;
pub mod headers;
pub mod pool;
pub mod session;
pub mod sse;
pub mod status;
pub mod tls;
pub mod transport;
pub mod wire;

pub use acquire::{acquire_http, HttpAcquired};
pub use handshake::HttpSpec;
pub use headers::CredentialHeader;
pub use transport::HttpTransport;
