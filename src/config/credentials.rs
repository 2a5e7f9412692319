//! Credential capture (config.md §8, lifecycle.md §3.2 stages 9a, 9b, 9e): the effective environment,
//! reading each selected binding once, normalising it, and the bearer and header rules.
//!
//! This module owns the capture scope: the environment file is read once at its start (9a), every
//! requested binding is read and checked (9b), and the file's assignments are dropped (and zeroed) at its
//! end, on success and on failure alike (9e). It never writes to the process environment: the effective
//! environment is a lookup layer over `std::env::var_os` (config.md §7.3). It does not decide which
//! bindings are selected (the startup stages do, with [`selected_bindings`]) nor how a captured value is used
//! on the wire (the HTTP front compares the bearer, providers build headers and child environments).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use zeroize::Zeroize;

use super::envfile::{self, EnvFile, EnvFileError};
use super::host::{CredentialSource, HeaderScheme, HostConfig, InstallationKind, McpTransport};
use super::secret::{read_secret_file, FileReadError, Secret};
use crate::codes::StartupCode;
use crate::explain::{Explain, Fact, Facts};

/// The size bound of a `file` credential (config.md §5.2, §8.2).
pub const MAX_CREDENTIAL_FILE_BYTES: usize = 65_536;
/// The shortest accepted bearer token, in bytes (config.md §8.4).
pub const MIN_BEARER_BYTES: usize = 32;
/// The longest accepted bearer token, in bytes (config.md §8.4).
pub const MAX_BEARER_BYTES: usize = 4096;

/// One binding to capture for the providers, and whether its value goes into an HTTP header (which adds
/// the header-value rule of config.md §8.3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingRequest {
    pub binding: String,
    pub in_header: bool,
}

/// The provider bindings referenced by the installations `aliases` (config.md §8.1): stdio `env`
/// bindings, `streamable_http` `headers` bindings, `llm` `credential`s; sorted, each once, and marked
/// `in_header` when any use puts the value itself into a header (`raw` and `bearer` schemes, the `llm`
/// credential). A `basic` header carries `base64(c)`, which always satisfies the header rule, so that use
/// alone does not mark the binding. Unknown aliases contribute nothing.
pub fn selected_bindings(host: &HostConfig, aliases: &[&str]) -> Vec<BindingRequest> {
    let mut uses: BTreeMap<&str, bool> = BTreeMap::new();
    for alias in aliases {
        let Some(installation) = host.install.get(*alias) else {
            continue;
        };
        match &installation.kind {
            InstallationKind::Mcp(mcp) => match &mcp.transport {
                McpTransport::Stdio(stdio) => {
                    for binding in stdio.env.values() {
                        uses.entry(binding.as_str()).or_insert(false);
                    }
                }
                McpTransport::StreamableHttp(http) => {
                    for header in &http.headers {
                        let raw = header.scheme != HeaderScheme::Basic;
                        *uses.entry(header.binding.as_str()).or_insert(false) |= raw;
                    }
                }
            },
            InstallationKind::Llm(llm) => {
                *uses.entry(llm.credential.as_str()).or_insert(false) = true;
            }
            InstallationKind::TraceSnapshot { .. } | InstallationKind::Reserved => {}
        }
    }
    uses.into_iter()
        .map(|(binding, in_header)| BindingRequest { binding: binding.to_owned(), in_header })
        .collect()
}

/// The result of one variable lookup in the effective environment.
#[derive(Debug)]
pub enum EnvLookup {
    /// Neither the file nor the process environment has the variable.
    Absent,
    /// The process value is not valid UTF-8 (the bytes were zeroed).
    NotUtf8,
    /// The value, possibly empty.
    Value(Secret),
}

/// The effective environment of config.md §7.3: the process environment overlaid by the environment
/// file's assignments. A name the file assigns takes the file's value even when that value is empty.
/// Reading only: nothing is ever written to the process environment.
#[derive(Clone, Copy, Debug, Default)]
pub struct EffectiveEnvironment<'a> {
    file: Option<&'a EnvFile>,
}

impl<'a> EffectiveEnvironment<'a> {
    /// The overlay of `file` (or the bare process environment without one).
    pub fn new(file: Option<&'a EnvFile>) -> EffectiveEnvironment<'a> {
        EffectiveEnvironment { file }
    }

    /// Looks `name` up: first in the file, then with `std::env::var_os`.
    pub fn lookup(&self, name: &str) -> EnvLookup {
        if let Some(value) = self.file.and_then(|file| file.get(name)) {
            return EnvLookup::Value(value.clone());
        }
        // Names that no environment can hold are absent (and never reach the C library).
        if name.is_empty() || name.contains(['=', '\0']) {
            return EnvLookup::Absent;
        }
        match std::env::var_os(name).map(OsString::into_string) {
            None => EnvLookup::Absent,
            Some(Ok(value)) => EnvLookup::Value(Secret::new(value)),
            Some(Err(raw)) => {
                raw.into_vec().zeroize();
                EnvLookup::NotUtf8
            }
        }
    }
}

/// Why a credential could not be captured. Every kind ends in `credential_unavailable`; the kind, the
/// binding name and an environment-file line number are safe to log, a value never appears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CredentialErrorKind {
    /// The environment file could not be read or parsed (config.md §7.1, §7.2).
    EnvFile(EnvFileError),
    /// The binding is not a key of the host document's `credentials` (config.md §5.8, §11 row 58).
    UnknownBinding,
    /// The bearer binding is a `literal` credential (config.md §5.8).
    LiteralBearer,
    /// An `env` credential's variable is absent from the effective environment (config.md §8.2).
    EnvAbsent,
    /// An `env` credential's process value is not valid UTF-8 (config.md §8.2).
    EnvNotUtf8,
    /// A `file` credential could not be opened or read (config.md §8.2).
    FileUnreadable(std::io::ErrorKind),
    /// A `file` credential is not a regular file after following symbolic links (config.md §8.2).
    FileNotRegular,
    /// A `file` credential holds more than 65,536 bytes (config.md §8.2).
    FileTooLarge,
    /// A `file` credential is not valid UTF-8 (config.md §8.2).
    FileNotUtf8,
    /// The normalised value is empty (config.md §8.3.2).
    Empty,
    /// The normalised value contains NUL, CR or LF (config.md §8.3.2).
    ForbiddenCharacter,
    /// A value used in a header holds a byte outside 0x20..0x7E and HTAB (config.md §8.3.3).
    HeaderCharacter,
    /// The bearer token is shorter than 32 or longer than 4,096 bytes (config.md §8.4).
    BearerLength,
    /// The bearer token is not token68 (config.md §8.4).
    BearerSyntax,
}

impl CredentialErrorKind {
    /// A stable snake_case name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialErrorKind::EnvFile(_) => "env_file_invalid",
            CredentialErrorKind::UnknownBinding => "unknown_binding",
            CredentialErrorKind::LiteralBearer => "literal_bearer",
            CredentialErrorKind::EnvAbsent => "env_absent",
            CredentialErrorKind::EnvNotUtf8 => "env_not_utf8",
            CredentialErrorKind::FileUnreadable(_) => "file_unreadable",
            CredentialErrorKind::FileNotRegular => "file_not_regular",
            CredentialErrorKind::FileTooLarge => "file_too_large",
            CredentialErrorKind::FileNotUtf8 => "file_not_utf8",
            CredentialErrorKind::Empty => "empty",
            CredentialErrorKind::ForbiddenCharacter => "forbidden_character",
            CredentialErrorKind::HeaderCharacter => "header_character",
            CredentialErrorKind::BearerLength => "bearer_length",
            CredentialErrorKind::BearerSyntax => "bearer_syntax",
        }
    }
}

/// A capture failure: what went wrong and for which binding (`None` for the environment file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialError {
    pub kind: CredentialErrorKind,
    pub binding: Option<String>,
}

impl Explain for CredentialError {
    /// The startup code of every capture failure (config.md §7.1, §8; lifecycle.md §3.2 stage 9).
    fn code(&self) -> StartupCode {
        StartupCode::CredentialUnavailable
    }

    /// The binding and the rule (lifecycle.md §1.5): names and line numbers, never a value.
    fn explain(&self, facts: &mut Facts) {
        if let Some(binding) = &self.binding {
            facts.insert(Fact::Binding, binding.clone());
        }
        facts.insert(Fact::Reason, self.reason());
    }
}

impl CredentialError {
    /// The rule that refused, as a sentence.
    fn reason(&self) -> String {
        use CredentialErrorKind as K;
        let text = match self.kind {
            K::EnvFile(e) => return format!("the --env-file {e}"),
            K::FileUnreadable(io) => return format!("the credential file cannot be read ({io})"),
            K::UnknownBinding => "the binding is not in the host document's credentials",
            K::LiteralBearer => "the bearer binding is a literal; the bearer must come from env or file",
            K::EnvAbsent => "its environment variable is not set (nor in the --env-file)",
            K::EnvNotUtf8 => "its environment variable is not valid UTF-8",
            K::FileNotRegular => "the credential file is not a regular file",
            K::FileTooLarge => "the credential file is larger than 65,536 bytes",
            K::FileNotUtf8 => "the credential file is not valid UTF-8",
            K::Empty => "the value is empty after normalisation",
            K::ForbiddenCharacter => "the value contains NUL, CR or LF",
            K::HeaderCharacter => "the value, sent in a header, holds a byte outside printable ASCII and tab",
            K::BearerLength => "the bearer is shorter than 32 or longer than 4,096 bytes",
            K::BearerSyntax => "the bearer is not token68",
        };
        text.to_owned()
    }
}

impl std::fmt::Display for CredentialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.kind, &self.binding) {
            (CredentialErrorKind::EnvFile(e), _) => write!(f, "credentials: {e}"),
            (CredentialErrorKind::FileUnreadable(io), Some(b)) => {
                write!(f, "credentials: binding {b:?}: file_unreadable ({io})")
            }
            (kind, Some(b)) => write!(f, "credentials: binding {b:?}: {}", kind.as_str()),
            (kind, None) => write!(f, "credentials: {}", kind.as_str()),
        }
    }
}

impl std::error::Error for CredentialError {}

/// Everything one capture produced: the bearer (serve mode) and each provider binding. Lives for the
/// process; every value is zeroed when this is dropped. `Debug` shows binding names only.
#[derive(Default)]
pub struct CapturedCredentials {
    bearer: Option<Secret>,
    bindings: BTreeMap<String, Secret>,
}

impl CapturedCredentials {
    /// The bearer token, when one was captured (serve mode).
    pub fn bearer(&self) -> Option<&Secret> {
        self.bearer.as_ref()
    }

    /// The normalised value of a captured provider binding.
    pub fn get(&self, binding: &str) -> Option<&Secret> {
        self.bindings.get(binding)
    }

    /// The captured provider binding names, in byte order.
    pub fn bindings(&self) -> impl Iterator<Item = &str> {
        self.bindings.keys().map(String::as_str)
    }
}

impl std::fmt::Debug for CapturedCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapturedCredentials")
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("bindings", &self.bindings.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Stages 9a, 9b and 9e (lifecycle.md §3.2): reads `env_file` once if given (whether or not a binding uses
/// it), then captures the bearer binding (serve mode; `None` in discovery) and every binding of
/// `provider_bindings`, each read once, in that order; the first failure wins. The environment file's
/// assignments are dropped before this returns, whatever the outcome.
pub fn capture(
    host: &HostConfig,
    env_file: Option<&Path>,
    bearer_binding: Option<&str>,
    provider_bindings: &[BindingRequest],
) -> Result<CapturedCredentials, CredentialError> {
    // 9a.
    let file = match env_file {
        Some(path) => Some(
            envfile::read(path)
                .map_err(|e| CredentialError { kind: CredentialErrorKind::EnvFile(e), binding: None })?,
        ),
        None => None,
    };
    let env = EffectiveEnvironment::new(file.as_ref());
    // 9b.
    let mut captured = CapturedCredentials::default();
    if let Some(name) = bearer_binding {
        let fail = |kind| CredentialError { kind, binding: Some(name.to_owned()) };
        let source = host.credentials.get(name).ok_or_else(|| fail(CredentialErrorKind::UnknownBinding))?;
        // config.md §5.8, §8.4: the bearer is an `env` or `file` credential.
        if matches!(source, CredentialSource::Literal(_)) {
            return Err(fail(CredentialErrorKind::LiteralBearer));
        }
        let value = read_normalised(&env, source).map_err(fail)?;
        check_bearer(&value).map_err(fail)?;
        captured.bearer = Some(value);
    }
    let mut requests: BTreeMap<&str, bool> = BTreeMap::new();
    for request in provider_bindings {
        *requests.entry(request.binding.as_str()).or_insert(false) |= request.in_header;
    }
    for (name, in_header) in requests {
        let fail = |kind| CredentialError { kind, binding: Some(name.to_owned()) };
        // config.md §8.1: a binding referenced several times is read once.
        let value = match (&captured.bearer, bearer_binding) {
            (Some(bearer), Some(b)) if b == name => bearer.clone(),
            _ => {
                let source =
                    host.credentials.get(name).ok_or_else(|| fail(CredentialErrorKind::UnknownBinding))?;
                read_normalised(&env, source).map_err(fail)?
            }
        };
        if in_header {
            check_header_value(&value).map_err(fail)?;
        }
        captured.bindings.insert(name.to_owned(), value);
    }
    // 9e: `file` (and with it the overlay) is dropped and zeroed here, and on every early return above.
    Ok(captured)
}

/// Reads one credential (config.md §8.2) and normalises it (config.md §8.3.1, §8.3.2).
pub fn read_normalised(
    env: &EffectiveEnvironment<'_>,
    source: &CredentialSource,
) -> Result<Secret, CredentialErrorKind> {
    let raw = match source {
        CredentialSource::Env(var) => match env.lookup(var) {
            EnvLookup::Absent => return Err(CredentialErrorKind::EnvAbsent),
            EnvLookup::NotUtf8 => return Err(CredentialErrorKind::EnvNotUtf8),
            EnvLookup::Value(value) => value,
        },
        CredentialSource::File(path) => read_file_credential(path)?,
        CredentialSource::Literal(value) => Secret::new(value.clone()),
    };
    normalise(&raw)
}

/// The whole file, once: a regular file after following symbolic links, at most 65,536 bytes, UTF-8.
fn read_file_credential(path: &Path) -> Result<Secret, CredentialErrorKind> {
    let mut bytes = read_secret_file(path, MAX_CREDENTIAL_FILE_BYTES).map_err(|e| match e {
        FileReadError::Unreadable(io) => CredentialErrorKind::FileUnreadable(io),
        FileReadError::NotRegularFile => CredentialErrorKind::FileNotRegular,
        FileReadError::TooLarge => CredentialErrorKind::FileTooLarge,
    })?;
    match String::from_utf8(std::mem::take(&mut *bytes)) {
        Ok(text) => Ok(Secret::new(text)),
        Err(e) => {
            e.into_bytes().zeroize();
            Err(CredentialErrorKind::FileNotUtf8)
        }
    }
}

/// config.md §8.3: trim SP, HTAB, CR and LF at both ends; the rest must be non-empty and free of NUL,
/// CR and LF.
pub fn normalise(raw: &Secret) -> Result<Secret, CredentialErrorKind> {
    let trimmed = raw.expose().trim_matches([' ', '\t', '\r', '\n']);
    if trimmed.is_empty() {
        return Err(CredentialErrorKind::Empty);
    }
    if trimmed.contains(['\0', '\r', '\n']) {
        return Err(CredentialErrorKind::ForbiddenCharacter);
    }
    Ok(Secret::new(trimmed.to_owned()))
}

/// config.md §8.3.3: a value used in an HTTP header consists of bytes 0x20..0x7E and HTAB only.
pub fn check_header_value(value: &Secret) -> Result<(), CredentialErrorKind> {
    if value.expose().bytes().all(|b| b == b'\t' || (0x20..=0x7E).contains(&b)) {
        Ok(())
    } else {
        Err(CredentialErrorKind::HeaderCharacter)
    }
}

/// config.md §8.4: 32..4096 bytes matching `^[A-Za-z0-9\-._~+/]+=*$` (token68).
pub fn check_bearer(value: &Secret) -> Result<(), CredentialErrorKind> {
    let token = value.expose();
    if !(MIN_BEARER_BYTES..=MAX_BEARER_BYTES).contains(&token.len()) {
        return Err(CredentialErrorKind::BearerLength);
    }
    let body = token.trim_end_matches('=');
    let token_char =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
    if body.is_empty() || !body.bytes().all(token_char) {
        return Err(CredentialErrorKind::BearerSyntax);
    }
    Ok(())
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
