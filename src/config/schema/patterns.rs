//! The patterns shared by the document definitions (config.md §4–§6), each written with `^…$` because a
//! schema pattern matches the whole string (config.md §1). Patterns used once stay next to their property.

/// A credential binding or an installation alias: `^[a-z][a-z0-9._-]{0,127}$` (config.md §4.2, §5.1, §6.2).
pub const BINDING: &str = "^[a-z][a-z0-9._-]{0,127}$";

/// A path-like string: non-empty, no NUL (config.md §4.2, §5.2, §5.4.1). The byte-bound rules refuse CR and
/// LF.
pub const NO_NUL: &str = "^[^\\x00]+$";

/// A digest string: `sha256:` and 64 lowercase hexadecimal digits (config.md §4.1).
pub const DIGEST: &str = "^sha256:[0-9a-f]{64}$";

/// A served tool name (config.md §4.2 `tools[].name`, `pcc.servers.<id>.tools`).
pub const TOOL_NAME: &str = "^[a-zA-Z0-9_.-]{1,128}$";

/// A gateway-visible upstream tool alias (config.md §5.4.3 `as`, config.md §6.2 `forward.tool`,
/// `config.allow`).
pub const TOOL_ALIAS: &str = "^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$";

/// An environment variable name (config.md §5.2 `env`, config.md §5.4.1 `env` keys).
pub const ENV_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";

/// A component id or a mission name (config.md §6.2).
pub const IDENTIFIER: &str = "^[a-z][a-z0-9_]{0,63}$";
