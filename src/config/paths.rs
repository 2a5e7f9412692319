//! Paths of the configuration documents: the lexical `anchor(p, base)` of config.md §3.2, the *directory of
//! a document*, and reading a document file through its path under the size limit of config.md §2.1.
//!
//! Anchoring is purely lexical: nothing here resolves symbolic links, expands `~` or `$VAR`, or checks that
//! a path exists (config.md §3.2). Which paths are anchored against which base is the callers' concern
//! (config.md §3.1), and what a document's bytes mean is the decoder's and the schemas' concern.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;

/// `anchor(p, base)` of config.md §3.2: `p` itself when absolute, else `base/p`, normalised lexically.
///
/// Normalisation collapses repeated `/`, drops `.` segments, lets `..` remove the preceding segment (`..`
/// at the root stays at the root) and drops a trailing `/` unless the result is `/`. `base` is expected to
/// be absolute (the invocation directory or a document's directory); a relative `base` yields a relative
/// result that keeps its leading `..` segments, since there is no root to stop at.
pub fn anchor(p: &Path, base: &Path) -> PathBuf {
    let p = p.as_os_str().as_bytes();
    if p.first() == Some(&b'/') {
        return normalise(p);
    }
    let base = base.as_os_str().as_bytes();
    let mut joined = Vec::with_capacity(base.len() + 1 + p.len());
    joined.extend_from_slice(base);
    joined.push(b'/');
    joined.extend_from_slice(p);
    normalise(&joined)
}

/// The lexical normalisation of step 2 of config.md §3.2, applied to `path` as written.
pub fn normalise(path: &[u8]) -> PathBuf {
    let absolute = path.first() == Some(&b'/');
    let mut segments: Vec<&[u8]> = Vec::new();
    for segment in path.split(|b| *b == b'/') {
        match segment {
            b"" | b"." => {}
            b".." => match segments.last() {
                Some(last) if *last != b".." => {
                    segments.pop();
                }
                // `..` at the root stays at the root (config.md §3.2); a relative path keeps it.
                _ if absolute => {}
                _ => segments.push(segment),
            },
            _ => segments.push(segment),
        }
    }
    let mut out = Vec::with_capacity(path.len());
    if absolute {
        out.push(b'/');
    }
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(segment);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    PathBuf::from(OsStr::from_bytes(&out))
}

/// The *directory of a document* (config.md §3.2): the lexically normalised path with its last segment
/// removed. For a symbolic link this is the directory of the link, never of its target, because nothing
/// is resolved.
pub fn document_dir(document: &Path) -> PathBuf {
    let normal = normalise(document.as_os_str().as_bytes());
    let bytes = normal.as_os_str().as_bytes();
    match bytes.iter().rposition(|b| *b == b'/') {
        Some(0) => PathBuf::from("/"),
        Some(i) => PathBuf::from(OsStr::from_bytes(bytes.get(..i).unwrap_or(b"/"))),
        None => PathBuf::from("."),
    }
}

/// Why a document file could not be read (config.md §2.8 "Decode failure": unreadable or too large).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// The path does not exist or cannot be inspected or opened (missing, permission denied).
    Open,
    /// The path names something other than a regular file (a directory, a FIFO, a device).
    NotRegularFile,
    /// Reading failed part-way.
    Io,
    /// More than the limit: reading stopped at limit + 1 bytes (config.md §2.1 rule 1).
    TooLarge,
}

/// A refused read. It carries no path and no content, so it can be logged without leaking either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub kind: ReadErrorKind,
    /// The operating system's error, when one refused (not for a size or a file type).
    pub errno: Option<nix::errno::Errno>,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            ReadErrorKind::Open => "the file cannot be opened",
            ReadErrorKind::NotRegularFile => "the path is not a regular file",
            ReadErrorKind::Io => "reading the file failed",
            ReadErrorKind::TooLarge => "the file exceeds its size limit",
        };
        f.write_str(what)
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    /// A read of `kind` refused by the operating system's `error`.
    pub(crate) fn from_io(kind: ReadErrorKind, error: &std::io::Error) -> ReadError {
        ReadError { kind, errno: error.raw_os_error().map(Errno::from_raw) }
    }
}

/// Reads the whole document at `path`, refusing more than `limit` bytes without reading past limit + 1
/// (config.md §2.1 rule 1). The file type is checked before opening so that a FIFO cannot block startup.
pub fn read_document(path: &Path, limit: usize) -> Result<Vec<u8>, ReadError> {
    let os = |kind| move |e: std::io::Error| ReadError::from_io(kind, &e);
    let refuse = |kind| ReadError { kind, errno: None };
    let meta = std::fs::metadata(path).map_err(os(ReadErrorKind::Open))?;
    if !meta.is_file() {
        return Err(refuse(ReadErrorKind::NotRegularFile));
    }
    let file = File::open(path).map_err(os(ReadErrorKind::Open))?;
    let opened = file.metadata().map_err(os(ReadErrorKind::Io))?;
    if !opened.is_file() {
        return Err(refuse(ReadErrorKind::NotRegularFile));
    }
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0).min(limit));
    file.take(cap).read_to_end(&mut bytes).map_err(os(ReadErrorKind::Io))?;
    if bytes.len() > limit {
        return Err(refuse(ReadErrorKind::TooLarge));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_vectors() {
        // (p, base, anchored) — config.md §3.2.
        let table: &[(&str, &str, &str)] = &[
            ("ptc-host.json", "/srv/ptc", "/srv/ptc/ptc-host.json"),
            ("/etc/ptc/host.json", "/srv/ptc", "/etc/ptc/host.json"),
            ("echo/ptc.json", "/srv/ptc/", "/srv/ptc/echo/ptc.json"),
            ("./a//b/./c/", "/srv", "/srv/a/b/c"),
            ("../x", "/srv/ptc", "/srv/x"),
            ("../../../../x", "/srv/ptc", "/x"),
            ("..", "/", "/"),
            (".", "/srv", "/srv"),
            ("a/..", "/srv", "/srv"),
            ("//a///b", "/ignored", "/a/b"),
            ("/", "/srv", "/"),
            ("~/x", "/srv", "/srv/~/x"),
            ("$HOME/x", "/srv", "/srv/$HOME/x"),
            ("a/b/../../..", "/srv/ptc", "/srv"),
            ("", "/srv/ptc", "/srv/ptc"),
        ];
        for (p, base, want) in table {
            assert_eq!(anchor(Path::new(p), Path::new(base)), PathBuf::from(want), "anchor({p:?}, {base:?})");
        }
    }

    #[test]
    fn relative_base_keeps_leading_dotdot() {
        assert_eq!(anchor(Path::new("../x"), Path::new("a")), PathBuf::from("x"));
        assert_eq!(anchor(Path::new("../../x"), Path::new("a")), PathBuf::from("../x"));
        assert_eq!(anchor(Path::new("."), Path::new(".")), PathBuf::from("."));
    }

    #[test]
    fn document_dir_vectors() {
        let table: &[(&str, &str)] = &[
            ("/srv/ptc/ptc-gateway.json", "/srv/ptc"),
            ("/srv//ptc/./gw.json", "/srv/ptc"),
            ("/gw.json", "/"),
            ("/", "/"),
            ("/srv/ptc/link.json", "/srv/ptc"),
            ("gw.json", "."),
            ("a/gw.json", "a"),
        ];
        for (doc, want) in table {
            assert_eq!(document_dir(Path::new(doc)), PathBuf::from(want), "document_dir({doc:?})");
        }
    }

    #[test]
    fn non_utf8_bytes_survive_anchoring() {
        let p = OsStr::from_bytes(b"caf\xe9/x");
        let got = anchor(Path::new(p), Path::new("/srv"));
        assert_eq!(got.as_os_str().as_bytes(), b"/srv/caf\xe9/x");
    }

    #[test]
    fn read_document_limits() {
        let dir = std::env::temp_dir().join(format!("ptc-paths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("doc.json");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(read_document(&file, 5).unwrap(), b"12345");
        assert_eq!(read_document(&file, 4).unwrap_err().kind, ReadErrorKind::TooLarge);
        assert_eq!(read_document(&dir, 5).unwrap_err().kind, ReadErrorKind::NotRegularFile);
        assert_eq!(read_document(&dir.join("missing"), 5).unwrap_err().kind, ReadErrorKind::Open);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
