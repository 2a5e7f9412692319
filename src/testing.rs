//! The tests' door into the library (`fault-injection` feature only): every internal module, re-exported
//! under the same path below `testing`, so a test names `ptc_gateway::testing::json::decode` where the
//! code says `crate::json::decode`. Nothing here is part of the library's surface ([`crate::main`]); it
//! exists so that the internals can stay `pub(crate)` for everything but the tests.

pub mod apps {
    pub use crate::apps::*;
}
pub mod audit {
    pub use crate::audit::*;
}
pub mod calendar {
    pub use crate::calendar::*;
}
pub mod client {
    pub use crate::client::*;
}
pub mod cli {
    pub use crate::cli::*;
}
pub mod codes {
    pub use crate::codes::*;
}
pub mod config {
    pub use crate::config::*;
}
pub mod events {
    pub use crate::events::*;
}
pub mod exec {
    pub use crate::exec::*;
}
pub mod fault {
    pub use crate::support::fault::*;
}
pub mod http {
    pub use crate::http::*;
}
pub mod json {
    pub use crate::json::*;
}
pub mod log_capture {
    pub use crate::support::log_capture::*;
}
pub mod logging {
    pub use crate::os::logging::*;
}
pub mod mcp {
    pub use crate::mcp::*;
}
pub mod mcp_param {
    pub use crate::mcp_param::*;
}
pub mod notify {
    pub use crate::os::notify::*;
}
pub mod pcc {
    pub use crate::pcc::*;
}
pub mod pins {
    pub use crate::pins::*;
}
pub mod providers {
    pub use crate::providers::*;
}
pub mod signals {
    pub use crate::os::signals::*;
}
pub mod startup {
    pub use crate::startup::*;
}
pub mod storage {
    pub use crate::storage::*;
}
pub mod traces {
    pub use crate::traces::*;
}
