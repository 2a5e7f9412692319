//! The closed catalog of startup codes (lifecycle.md §4).
//!
//! Every refusal before readiness ends as exactly one of these codes on stderr as `{"error":"<code>"}`.
//! The catalog is a stable interface: adding a variant is a contract change.

use std::fmt;

/// One startup code. `as_str` is the exact wire spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StartupCode {
    ConfigUnavailable,
    DuplicateJsonKey,
    ConfigInvalid,
    OriginInvalid,
    ToolNameDuplicate,
    AuditInvalid,
    HostInvalid,
    CredentialUnavailable,
    ArtifactRootUnavailable,
    TemplateInvalid,
    ApplicationContentDigestMismatch,
    ProviderSourceUnsupported,
    WriteForbidden,
    CatalogTooLarge,
    ListenerCapacityExceeded,
    ListenerCapacityUnavailable,
    AuditUnavailable,
    RunAdmissionUnavailable,
    ProviderAdmissionUnavailable,
    InstallationPinMismatch,
    ProviderPinMismatch,
    ProviderPinUnavailable,
    ProviderRuntimeUnavailable,
    ListenerUnavailable,
    InternalError,
}

impl StartupCode {
    /// Every code, in the order of lifecycle.md §4.
    pub const ALL: [StartupCode; 25] = [
        StartupCode::ConfigUnavailable,
        StartupCode::DuplicateJsonKey,
        StartupCode::ConfigInvalid,
        StartupCode::OriginInvalid,
        StartupCode::ToolNameDuplicate,
        StartupCode::AuditInvalid,
        StartupCode::HostInvalid,
        StartupCode::CredentialUnavailable,
        StartupCode::ArtifactRootUnavailable,
        StartupCode::TemplateInvalid,
        StartupCode::ApplicationContentDigestMismatch,
        StartupCode::ProviderSourceUnsupported,
        StartupCode::WriteForbidden,
        StartupCode::CatalogTooLarge,
        StartupCode::ListenerCapacityExceeded,
        StartupCode::ListenerCapacityUnavailable,
        StartupCode::AuditUnavailable,
        StartupCode::RunAdmissionUnavailable,
        StartupCode::ProviderAdmissionUnavailable,
        StartupCode::InstallationPinMismatch,
        StartupCode::ProviderPinMismatch,
        StartupCode::ProviderPinUnavailable,
        StartupCode::ProviderRuntimeUnavailable,
        StartupCode::ListenerUnavailable,
        StartupCode::InternalError,
    ];

    /// The exact spelling printed in `{"error":"<code>"}`.
    pub fn as_str(self) -> &'static str {
        match self {
            StartupCode::ConfigUnavailable => "config_unavailable",
            StartupCode::DuplicateJsonKey => "duplicate_json_key",
            StartupCode::ConfigInvalid => "config_invalid",
            StartupCode::OriginInvalid => "origin_invalid",
            StartupCode::ToolNameDuplicate => "tool_name_duplicate",
            StartupCode::AuditInvalid => "audit_invalid",
            StartupCode::HostInvalid => "host_invalid",
            StartupCode::CredentialUnavailable => "credential_unavailable",
            StartupCode::ArtifactRootUnavailable => "artifact_root_unavailable",
            StartupCode::TemplateInvalid => "template_invalid",
            StartupCode::ApplicationContentDigestMismatch => "application_content_digest_mismatch",
            StartupCode::ProviderSourceUnsupported => "provider_source_unsupported",
            StartupCode::WriteForbidden => "write_forbidden",
            StartupCode::CatalogTooLarge => "catalog_too_large",
            StartupCode::ListenerCapacityExceeded => "listener_capacity_exceeded",
            StartupCode::ListenerCapacityUnavailable => "listener_capacity_unavailable",
            StartupCode::AuditUnavailable => "audit_unavailable",
            StartupCode::RunAdmissionUnavailable => "run_admission_unavailable",
            StartupCode::ProviderAdmissionUnavailable => "provider_admission_unavailable",
            StartupCode::InstallationPinMismatch => "installation_pin_mismatch",
            StartupCode::ProviderPinMismatch => "provider_pin_mismatch",
            StartupCode::ProviderPinUnavailable => "provider_pin_unavailable",
            StartupCode::ProviderRuntimeUnavailable => "provider_runtime_unavailable",
            StartupCode::ListenerUnavailable => "listener_unavailable",
            StartupCode::InternalError => "internal_error",
        }
    }

    /// The single stderr line of lifecycle.md §5.1, LF included.
    pub fn error_line(self) -> String {
        format!("{{\"error\":\"{}\"}}\n", self.as_str())
    }
}

impl fmt::Display for StartupCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for StartupCode {}

super::serialize_as_str!(StartupCode);
