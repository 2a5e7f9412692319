//! Secret material in memory: the [`Secret`] type, and bounded reads of files that may hold secrets
//! (credential files, the environment file).
//!
//! This module owns how secret bytes are held (never printed, zeroed when dropped, compared in constant
//! time) and how a secret-bearing file is read (a regular file after following symbolic links, never
//! more than its bound plus one byte, into a buffer that is zeroed afterwards). It does not decide what
//! a valid credential is: that is `credentials` (config.md §8) and `envfile` (config.md §7).

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use zeroize::{Zeroize, Zeroizing};

/// A captured secret value (config.md §8.5). Its `Debug` and `Display` never show the value, and its
/// memory is overwritten with zeros when it is dropped (with the `zeroize` crate, whose volatile writes
/// the optimiser cannot remove). Clones are independent copies, each zeroed on its own drop.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret {
    value: String,
}

impl Secret {
    /// Takes ownership of `value` without copying it.
    pub fn new(value: String) -> Secret {
        Secret { value }
    }

    /// The value, for the few places that must use it (an upstream header, a child's environment, the
    /// bearer comparison). Callers must not log or store what they get.
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// The length in bytes (not secret: bounds are checked and reported on it).
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// Whether the value is empty.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Compares with `candidate` in time that depends only on the two lengths, never on where the first
    /// differing byte is, so a client cannot learn the bearer token byte by byte from response timing.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let expected = self.value.as_bytes();
        let mut diff = u8::from(expected.len() != candidate.len());
        for (i, &b) in expected.iter().enumerate() {
            diff |= b ^ candidate.get(i).copied().unwrap_or(!b);
        }
        std::hint::black_box(diff) == 0
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.value.zeroize();
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Why a secret-bearing file could not be read. Never carries content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileReadError {
    /// Opening, inspecting or reading failed (missing, permission denied, I/O error, a dangling
    /// symbolic link).
    Unreadable(std::io::ErrorKind),
    /// The path names something other than a regular file after following symbolic links.
    NotRegularFile,
    /// The file holds more than the bound.
    TooLarge,
}

/// Reads the whole regular file at `path` (symbolic links followed), refusing it when it holds more than
/// `max_bytes` bytes; at most `max_bytes + 1` bytes are read (config.md §7.1, §8.2). The buffer is zeroed
/// when dropped, also on every failure.
///
/// The file is opened with `O_NONBLOCK` so that a FIFO or device is refused at once by the `fstat` on the
/// open handle instead of blocking the open; the check on the handle (not on the path) also closes the
/// window in which the path could be swapped.
pub fn read_secret_file(path: &Path, max_bytes: usize) -> Result<Zeroizing<Vec<u8>>, FileReadError> {
    let unreadable = |e: std::io::Error| FileReadError::Unreadable(e.kind());
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(unreadable)?;
    let metadata = file.metadata().map_err(unreadable)?;
    if !metadata.is_file() {
        return Err(FileReadError::NotRegularFile);
    }
    let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX).saturating_add(1);
    // One byte more than `take` can deliver: the vector never fills, so `read_to_end` neither
    // reallocates nor probes through a stack buffer, and no unzeroed copy of the content is left behind.
    let mut buffer = Zeroizing::new(Vec::with_capacity(max_bytes.saturating_add(2)));
    file.take(limit).read_to_end(&mut buffer).map_err(unreadable)?;
    if buffer.len() > max_bytes {
        return Err(FileReadError::TooLarge);
    }
    Ok(buffer)
}

/// A private temporary directory for tests, removed when dropped.
#[cfg(test)]
pub(crate) struct TempDir(std::path::PathBuf);

#[cfg(test)]
impl TempDir {
    /// A fresh directory, unique per process and call.
    pub(crate) fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ptc-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }

    /// `name` inside the directory.
    pub(crate) fn path(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }

    /// Writes `bytes` to `name` and returns its path.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = self.path(name);
        std::fs::write(&path, bytes).expect("write temp file");
        path
    }
}

#[cfg(test)]
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_is_never_printed() {
        let secret = Secret::new("hunter2-very-secret".to_owned());
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        assert_eq!(format!("{secret}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(Secret(<redacted>))");
        assert_eq!(secret.expose(), "hunter2-very-secret");
        assert_eq!(secret.len(), 19);
    }

    #[test]
    fn constant_time_match() {
        let secret = Secret::new("abcdef".to_owned());
        assert!(secret.matches(b"abcdef"));
        for other in [&b"abcdeg"[..], b"abcde", b"abcdefg", b"", b"Abcdef"] {
            assert!(!secret.matches(other), "{other:?}");
        }
        assert!(Secret::new(String::new()).matches(b""));
        assert!(!Secret::new(String::new()).matches(b"\xff"));
    }

    #[test]
    fn bounded_regular_file_reads() {
        let dir = TempDir::new("secret-read");
        let exact = dir.write("exact", &[b'a'; 16]);
        assert_eq!(read_secret_file(&exact, 16).map(|b| b.len()), Ok(16));
        assert_eq!(read_secret_file(&exact, 15).err(), Some(FileReadError::TooLarge));
        let empty = dir.write("empty", b"");
        assert_eq!(read_secret_file(&empty, 16).map(|b| b.len()), Ok(0));
        let link = dir.path("link");
        std::os::unix::fs::symlink(&exact, &link).expect("symlink");
        assert_eq!(read_secret_file(&link, 16).map(|b| b.len()), Ok(16));
        let dangling = dir.path("dangling");
        std::os::unix::fs::symlink(dir.path("nowhere"), &dangling).expect("symlink");
        let not_found = Some(FileReadError::Unreadable(std::io::ErrorKind::NotFound));
        assert_eq!(read_secret_file(&dangling, 16).err(), not_found);
        assert_eq!(read_secret_file(&dir.path("missing"), 16).err(), not_found);
        assert_eq!(read_secret_file(&dir.path(""), 16).err(), Some(FileReadError::NotRegularFile));
        // A FIFO is refused at once instead of blocking the open.
        let fifo = dir.path("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        assert_eq!(read_secret_file(&fifo, 16).err(), Some(FileReadError::NotRegularFile));
    }
}
