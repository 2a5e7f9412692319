//! The closed error type of stage 5 (lifecycle.md §3.2): why one application, or the catalog over all of
//! them, was refused, and which startup code that refusal prints.
//!
//! Owns the mapping from each rule of config.md §6, execution.md §11–§12 and http-mcp.md §9.1/§10.3 to its
//! startup code. Does not own the order in which rules run (`template`) nor the rules themselves. An error
//! carries no path, no file content and no credential: it names the rule that failed, nothing more, so it
//! can be logged as it is.

use crate::codes::StartupCode;
use crate::config::document_error::Problem;
use crate::explain::{Explain, Fact, Facts};

/// Which rule refused an application. Every variant maps to exactly one startup code ([`AppError::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppErrorKind {
    // 5a (config.md §2.8): the manifest file.
    /// The manifest file is missing, unreadable, not a regular file, or above 1,000,000 bytes.
    ManifestUnreadable,
    /// The manifest failed decoding or its structure.
    ManifestInvalid,

    // 5b (config.md §6.2, §6.10).
    /// `events.policy` is `"private"`.
    EventsPolicyPrivate,

    // 5c (config.md §6.3).
    /// A closure path is absolute, empty, or has an empty, `.` or `..` segment.
    ClosurePathInvalid,
    /// A directory on the way to a closure file, or the file itself, is a symbolic link, or a directory
    /// on the way is not a directory.
    ClosureNotConfined,
    /// A closure file is missing or cannot be opened or read.
    ClosureUnreadable,
    /// A closure path names something other than a regular file.
    ClosureNotRegularFile,
    /// A contract file or component source is above 1,000,000 bytes.
    ClosureFileTooLarge,
    /// More than 512 file references.
    ClosureTooManyReferences,
    /// A component source is not valid UTF-8.
    ComponentSourceNotUtf8,

    // Content pin (pins.md §6.2).
    /// Two records share `(kind, name)`.
    ContentRecordDuplicate,
    /// The framed content stream is above 8,388,608 bytes.
    ContentStreamTooLarge,
    // 5d (pins.md §9.1).
    /// The computed content pin differs from `expected_application_content_digest`.
    ContentDigestMismatch,

    // 5e (config.md §6.4, §6.6, §6.9).
    /// Two components of one environment share an id.
    ComponentIdDuplicate,
    /// A dependency names no component of the same environment.
    DependencyUnknown,
    /// A component depends on itself.
    DependencySelf,
    /// The dependency graph of an environment has a cycle.
    DependencyCycle,
    /// `workflow.entry` names no workflow component.
    EntryComponentUnknown,
    /// `workflow.forward.mission` names no mission.
    ForwardMissionUnknown,
    /// `workflow.forward.tool` is not in the mission's grant set.
    ForwardToolNotGranted,
    /// `limits.run_duration_ms` exceeds the host's `limits.run_duration_ms`.
    RunDurationAboveHost,

    // 5e contracts (config.md §6.7, execution.md §11.2).
    /// A contract file failed strict decoding (duplicate keys included).
    ContractUndecodable,
    /// The root is not an object schema whose `type` is exactly `"object"`.
    ContractRootNotObject,
    /// The root `$schema` is present and not draft 2020-12.
    ContractDialect,
    /// A `$ref` (or `$dynamicRef`) does not begin with `#`.
    ContractExternalReference,
    /// The normalised schema encodes to more than 65,536 bytes.
    ContractTooLarge,
    /// `jsonschema` refused to compile the normalised schema.
    ContractUncompilable,

    // 5e Luau (execution.md §12.7).
    /// A component source does not compile.
    LuauSyntax,
    /// A probe sandbox could not be created (the Luau state or its globals).
    LuauSandbox,
    /// A probed chunk raised an error or did not return a table.
    LuauProbeFailed,
    /// The entry component's module has no function under the entry name.
    LuauEntryMissing,
    /// The probe passed the interrupt budget.
    LuauBudgetExhausted,
    /// Compilation and probing of the application took more than 5,000 ms.
    LuauTimeExceeded,

    // 5f: the provider selection rules S1–S12 (config.md §6.5).
    /// Rule S1: a declaration names an installation of a source its list does not accept.
    SelectionSourceRefused,
    /// Rule S2: a declaration names no `install` alias.
    SelectionInstallationUnknown,
    /// Rule S3: a declaration name repeats within its list.
    SelectionDuplicate,
    /// Rule S3: the two lists hold more than 128 declarations.
    SelectionTooMany,
    /// Rule S4: a `missions.<m>.providers` entry names no `providers.mission` declaration.
    MissionProviderUnknown,
    /// Rule S4: a `providers.mission` declaration is granted to no mission.
    DeclarationNotGranted,
    /// Rule S5: an `allow` entry is not an alias the installation maps.
    AllowNotMapped,
    /// Rule S6: an installation mapping a `write` tool is selected without `config.allow`.
    AllowRequired,
    /// Rule S8: two declarations of one mission reach the same alias.
    AliasCollision,
    /// Rule S9: a `read` application's grant set holds a `write` alias.
    ReadGrantsWrite,
    /// Rule S10: a selected installation has `oauth`.
    OauthSelected,
    /// Rule S10: a workflow selection with `config.catalog: true` (served later).
    CatalogSelected,
    /// Rule S11: a snapshot mixed with live providers (mission or model).
    SnapshotMixed,
    /// Rule S12: a `read` application declares a workflow model provider (models.md §2).
    ModelInReadApplication,
    /// Rule S12: a forward application declares a workflow model provider (models.md §2).
    ModelInForward,

    // 5g (config.md §6.8 rule 3).
    /// A `write` application on a tool without `allow_write: true`.
    WriteNotAllowed,

    // 5h (http-mcp.md §9.1).
    /// `x-mcp-header` outside a property schema.
    HeaderPlacement,
    /// An annotated property's path has more than 16 names.
    HeaderPathTooLong,
    /// An annotated property's `type` is not exactly `string`, `integer` or `boolean`.
    HeaderType,
    /// The suffix is not a string of 1..128 tchar bytes.
    HeaderSuffix,
    /// Two suffixes are equal ASCII case-insensitively.
    HeaderDuplicate,
    /// More than 24 annotated properties.
    HeaderTooMany,

    // 5i (http-mcp.md §10.3).
    /// The encoded `tools` array or the worst-case `tools/list` response is above 4,194,304 bytes.
    CatalogTooLarge,
}

/// A refusal of stage 5: the rule, and what a person needs to find the fault when the rule concerns one
/// file of the application.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct AppError {
    pub kind: AppErrorKind,
    /// Boxed: a refusal is rare, and most carry none.
    pub detail: Option<Box<AppDetail>>,
    /// The tool, for a rule checked over every template at once (5h), where the caller that names the
    /// tool of 5a–5g does not know which one refused.
    pub tool: Option<String>,
}

/// Where in the application a refusal is, for `ptc check` and `ptc pin` (lifecycle.md §1.5). Names the
/// file as the manifest names it; the texts come from the application's own files (Luau's message quotes
/// the component's source, the excerpt the contract's line), never from a host document or a credential.
#[derive(Clone, Debug, PartialEq)]
pub enum AppDetail {
    /// A Luau component that does not compile: the line Luau names and its message.
    Compile { file: String, line: Option<u64>, message: String },
    /// A contract file that is not strict JSON: the decoder's reason with its position, and the refused
    /// line with a caret.
    NotJson { file: String, line: usize, column: usize, reason: String, excerpt: String },
    /// A component that raised while it loaded (the startup probe, execution.md §12.7): Luau's message,
    /// which names the component's file and line through its chunk name.
    Load { message: String },
    /// The manifest itself is refused: unreadable, not strict JSON, or against its schema.
    Manifest(Problem),
    /// The computed content pin and the configured one (pins.md §9.1), with what the check of the changed
    /// application found broken in it, if anything (lifecycle.md §1.5).
    Digest { expected: String, computed: String, broken: Option<Box<AppDetail>> },
    /// A listing bound (http-mcp.md §10.3): what was measured, its size and the bound, in bytes.
    Size { what: &'static str, bytes: usize, limit: usize },
    /// A file of the closure (config.md §6.3) that could not be read as the rules require, with the
    /// operating system's error when one refused.
    File { file: String, errno: Option<nix::errno::Errno> },
}

impl AppDetail {
    /// The file and the place in it, as compilers print it: `file:line` or `file:line:column`; `None` when
    /// the message itself names them (a load failure).
    pub fn place(&self) -> Option<String> {
        match self {
            AppDetail::Compile { file, line: Some(line), .. } => Some(format!("{file}:{line}")),
            AppDetail::Compile { file, line: None, .. } => Some(file.clone()),
            AppDetail::NotJson { file, line, column, .. } => Some(format!("{file}:{line}:{column}")),
            AppDetail::File { file, .. } => Some(file.clone()),
            AppDetail::Load { .. } | AppDetail::Manifest(_) | AppDetail::Size { .. } => None,
            AppDetail::Digest { broken, .. } => broken.as_ref().and_then(|b| b.place()),
        }
    }
}

impl AppError {
    /// The refusal for `kind`.
    pub const fn new(kind: AppErrorKind) -> AppError {
        AppError { kind, detail: None, tool: None }
    }

    /// The refusal for `kind`, with where it is.
    pub fn with_detail(kind: AppErrorKind, detail: AppDetail) -> AppError {
        AppError { kind, detail: Some(Box::new(detail)), tool: None }
    }

    /// The same refusal, naming the tool it concerns.
    pub fn for_tool(mut self, tool: &str) -> AppError {
        self.tool = Some(tool.to_owned());
        self
    }

    /// The same refusal, naming `file` when its detail does not name one yet (a contract is decoded
    /// from bytes; its caller knows the path).
    pub fn in_file(mut self, file: &str) -> AppError {
        if let Some(AppDetail::Compile { file: named, .. } | AppDetail::NotJson { file: named, .. }) =
            self.detail.as_deref_mut()
        {
            if named.is_empty() {
                file.clone_into(named);
            }
        }
        self
    }

    /// The same refusal of the closure (config.md §6.3), naming the file it concerns.
    pub(crate) fn in_closure_file(mut self, file: &str) -> AppError {
        match self.detail.as_deref_mut() {
            Some(AppDetail::File { file: named, .. }) if named.is_empty() => file.clone_into(named),
            Some(_) => {}
            None => self.detail = Some(Box::new(AppDetail::File { file: file.to_owned(), errno: None })),
        }
        self
    }

    /// The refusal `kind` of a closure file the operating system refused with `errno` (the file is named
    /// by [`AppError::in_closure_file`]).
    pub(crate) fn os(kind: AppErrorKind, errno: nix::errno::Errno) -> AppError {
        AppError::with_detail(kind, AppDetail::File { file: String::new(), errno: Some(errno) })
    }

    /// The startup code the refusal prints (lifecycle.md §3.2 stage 5).
    pub fn code(&self) -> StartupCode {
        use AppErrorKind as K;
        match self.kind {
            K::ContentDigestMismatch => StartupCode::ApplicationContentDigestMismatch,
            // config.md §6.5: S1, S10 and S11 are `provider_source_unsupported`.
            K::SelectionSourceRefused | K::OauthSelected | K::CatalogSelected | K::SnapshotMixed => {
                StartupCode::ProviderSourceUnsupported
            }
            K::WriteNotAllowed => StartupCode::WriteForbidden,
            K::CatalogTooLarge => StartupCode::CatalogTooLarge,
            _ => StartupCode::TemplateInvalid,
        }
    }

    /// A short, stable description of the rule, for logs (never a path or content).
    pub fn describe(&self) -> &'static str {
        use AppErrorKind as K;
        match self.kind {
            K::ManifestUnreadable => "the manifest cannot be read",
            K::ManifestInvalid => "the manifest is not a valid application manifest",
            K::EventsPolicyPrivate => "events.policy \"private\" is not served",
            K::ClosurePathInvalid => "a closure path is not a plain relative path",
            K::ClosureNotConfined => "a closure path passes through a symbolic link or a non-directory",
            K::ClosureUnreadable => "a closure file cannot be read",
            K::ClosureNotRegularFile => "a closure path is not a regular file",
            K::ClosureFileTooLarge => "a closure file exceeds 1,000,000 bytes",
            K::ClosureTooManyReferences => "the closure holds more than 512 file references",
            K::ComponentSourceNotUtf8 => "a component source is not valid UTF-8",
            K::ContentRecordDuplicate => "two content records share a kind and name",
            K::ContentStreamTooLarge => "the content stream exceeds 8,388,608 bytes",
            K::ContentDigestMismatch => "the application content digest does not match",
            K::ComponentIdDuplicate => "two components of one environment share an id",
            K::DependencyUnknown => "a dependency names no component of its environment",
            K::DependencySelf => "a component depends on itself",
            K::DependencyCycle => "the dependencies of an environment form a cycle",
            K::EntryComponentUnknown => "the entry names no workflow component",
            K::ForwardMissionUnknown => "the forward mission does not exist",
            K::ForwardToolNotGranted => "the forward tool is not granted to its mission",
            K::RunDurationAboveHost => "limits.run_duration_ms exceeds the host limit",
            K::ContractUndecodable => "a contract file is not strict JSON",
            K::ContractRootNotObject => "a contract root is not an object schema of type object",
            K::ContractDialect => "a contract root $schema is not draft 2020-12",
            K::ContractExternalReference => "a contract reference leaves its document",
            K::ContractTooLarge => "a normalised contract exceeds 65,536 bytes",
            K::ContractUncompilable => "a contract does not compile",
            K::LuauSyntax => "a component does not compile",
            K::LuauSandbox => "a probe sandbox could not be created",
            K::LuauProbeFailed => "a component failed to load",
            K::LuauEntryMissing => "the entry function does not exist",
            K::LuauBudgetExhausted => "loading passed the interrupt budget",
            K::LuauTimeExceeded => "compilation and loading took more than 5,000 ms",
            K::SelectionSourceRefused => "a provider declaration names a source its list refuses",
            K::SelectionInstallationUnknown => "a provider declaration names no installation",
            K::SelectionDuplicate => "a provider declaration name repeats",
            K::SelectionTooMany => "more than 128 provider declarations",
            K::MissionProviderUnknown => "a mission grants an undeclared provider",
            K::DeclarationNotGranted => "a mission provider declaration is granted to no mission",
            K::AllowNotMapped => "config.allow names an alias its installation does not map",
            K::AllowRequired => "config.allow is required for an installation with write tools",
            K::AliasCollision => "two declarations of one mission reach the same alias",
            K::ReadGrantsWrite => "a read application grants a write tool",
            K::OauthSelected => "an OAuth installation is selected",
            K::CatalogSelected => "a workflow selection asks for the catalog form, served in a later version",
            K::SnapshotMixed => "a trace snapshot is selected beside a live provider",
            K::ModelInReadApplication => "a read application declares a workflow model provider",
            K::ModelInForward => "a forward application declares a workflow model provider",
            K::WriteNotAllowed => "a write application needs allow_write",
            K::HeaderPlacement => "x-mcp-header outside a property schema",
            K::HeaderPathTooLong => "an x-mcp-header property path exceeds 16 names",
            K::HeaderType => "an x-mcp-header property is not a string, integer or boolean",
            K::HeaderSuffix => "an x-mcp-header suffix is not 1..128 tchar bytes",
            K::HeaderDuplicate => "two x-mcp-header suffixes are equal",
            K::HeaderTooMany => "more than 24 x-mcp-header properties",
            K::CatalogTooLarge => "the tools/list response exceeds 4,194,304 bytes",
        }
    }
}

impl From<AppErrorKind> for AppError {
    fn from(kind: AppErrorKind) -> Self {
        AppError::new(kind)
    }
}

impl Explain for AppError {
    fn code(&self) -> StartupCode {
        AppError::code(self)
    }

    /// The facts of lifecycle.md §1.5 for stage 5: the file and place of the fault, Luau's message or the
    /// refused line, the digests of a changed application, the sizes of a listing bound; otherwise the
    /// rule's sentence.
    fn explain(&self, facts: &mut Facts) {
        if let Some(tool) = &self.tool {
            facts.insert(Fact::Tool, tool.clone());
        }
        facts.insert(Fact::Reason, self.describe().to_owned());
        if let Some(detail) = self.detail.as_deref() {
            detail.explain(facts);
        }
    }
}

impl AppDetail {
    fn explain(&self, facts: &mut Facts) {
        if let Some(place) = self.place() {
            facts.insert(Fact::Component, place);
        }
        match self {
            AppDetail::Compile { message, .. } | AppDetail::Load { message } => {
                facts.insert(Fact::Message, message.clone());
            }
            AppDetail::NotJson { reason, excerpt, .. } => {
                facts.insert(Fact::Reason, reason.clone());
                facts.insert(Fact::Excerpt, excerpt.clone());
            }
            AppDetail::Manifest(problem) => problem.explain(facts),
            AppDetail::Digest { expected, computed, broken } => {
                // Both digests are names of content, not content.
                facts.insert(Fact::Field, "expected_application_content_digest".to_owned());
                facts.insert(Fact::Expected, expected.clone());
                facts.insert(Fact::Computed, computed.clone());
                if let Some(broken) = broken {
                    broken.explain_changed(facts);
                }
            }
            AppDetail::Size { what, bytes, limit } => {
                facts.insert(Fact::Needed, format!("{what}: {bytes} bytes"));
                facts.insert(Fact::Available, format!("{limit} bytes"));
            }
            AppDetail::File { errno: Some(errno), .. } => {
                if let Some(reason) = facts.get_mut(&Fact::Reason) {
                    reason.push_str(&format!(" ({})", errno.desc()));
                }
            }
            AppDetail::File { errno: None, .. } => {}
        }
    }

    /// A changed application that is also broken: what is broken, and a hint that pinning it would not
    /// help, in place of the one that suggests `ptc pin` (lifecycle.md §1.5).
    fn explain_changed(&self, facts: &mut Facts) {
        let (reason, hint) = match self {
            AppDetail::Compile { .. } => (
                "the application changed, and a component does not compile",
                "fix the component first: pinning an application that does not compile would not help",
            ),
            AppDetail::NotJson { .. } => (
                "the application changed, and a contract file is not strict JSON",
                "fix the contract first: pinning an application with a broken contract would not help",
            ),
            // The check of a changed application compiles and decodes; it neither loads nor lists.
            AppDetail::Load { .. }
            | AppDetail::Manifest(_)
            | AppDetail::Digest { .. }
            | AppDetail::Size { .. }
            | AppDetail::File { .. } => return,
        };
        self.explain(facts);
        facts.insert(Fact::Reason, reason.to_owned());
        facts.insert(Fact::Hint, hint.to_owned());
    }
}

/// Shorthand for `Err(AppError::new(kind))`.
pub(crate) fn fail<T>(kind: AppErrorKind) -> Result<T, AppError> {
    Err(AppError::new(kind))
}
