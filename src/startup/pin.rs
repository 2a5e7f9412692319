//! `ptc pin CONFIG [--env-file FILE]` (lifecycle.md §1.3): discovery exactly as `--print-pins` runs it,
//! then the three pin members of every tool written into the gateway document, atomically, keeping
//! everything else of the file (its mode, its key order, its indentation), and one line per changed member
//! on stdout.
//!
//! Owns the command's file handling: reading the document's text, the temporary file beside it (created
//! exclusively with the document's mode), its fsync, the rename over the document and the directory's
//! fsync. The text edit is `pins::rewrite`'s; discovery is `discovery`'s.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::cli::GatewayArgs;
use crate::config::document_error::{DocumentError, Problem};
use crate::config::paths::{ReadError, ReadErrorKind};
use crate::explain::{Fact, Refusal};
use crate::pins::rewrite::rewrite;
use crate::startup::{discovery, StartupCode};

/// Runs the command: the lines to print, one per changed member (none when every pin was current).
pub async fn run(args: &GatewayArgs) -> Result<Vec<String>, Refusal> {
    let pins = discovery::discover(args).await?;
    // The document as written now; discovery has just accepted it, so a failure here is a file that
    // changed or went away meanwhile.
    let document = |code, reason: String| {
        Refusal::new(code).with(Fact::Document, args.config.display().to_string()).with(Fact::Reason, reason)
    };
    let bytes = std::fs::read(&args.config).map_err(|e| {
        let problem = Problem::Unreadable(ReadError::from_io(ReadErrorKind::Open, &e));
        DocumentError::new(StartupCode::ConfigUnavailable, &args.config, problem)
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let reason = format!("the document changed: it is no longer UTF-8 ({})", e.utf8_error());
        document(StartupCode::ConfigUnavailable, reason)
    })?;
    let (rewritten, changes) = rewrite(&text, &pins).ok_or_else(|| {
        let reason = "the document has no top-level tools array of named objects whose pins can be rewritten";
        document(StartupCode::ConfigInvalid, reason.to_owned())
    })?;
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    replace(&args.config, rewritten.as_bytes()).map_err(|error| {
        tracing::debug!(%error, "the gateway document could not be replaced");
        document(StartupCode::ConfigUnavailable, format!("the document could not be replaced: {error}"))
    })?;
    Ok(changes.iter().map(|c| c.line()).collect())
}

/// Replaces the file at `path` (followed through symbolic links) with `bytes`: a temporary file in the
/// same directory with the file's permission bits, written and fsync'd, renamed over it, and the directory
/// fsync'd. On failure the temporary file is removed and the document is untouched.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let mode = std::fs::metadata(&target)?.permissions().mode() & 0o7777;
    let dir = target.parent().ok_or_else(|| std::io::Error::other("the document has no directory"))?;
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("config");
    let temporary = dir.join(format!(".{name}.ptc-pin-{}", std::process::id()));
    let written = (|| {
        let mut file =
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, &target)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}
