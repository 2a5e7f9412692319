//! Test-only helpers: a private scratch directory on the real filesystem, removed on drop, and small
//! builders for the fixtures the storage tests need. Not compiled outside `cfg(test)`.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A scratch directory under the system temporary directory, mode 0700, removed with its contents on
/// drop.
pub struct Scratch {
    path: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Scratch {
    pub fn new() -> Scratch {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ptc-storage-{}-{}-{}", std::process::id(), n, nanos));
        fs::create_dir(&path).unwrap();
        set_mode(&path, 0o700);
        Scratch { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates `rel` with the given mode, and its missing parents with mode 0700.
    pub fn dir(&self, rel: &str, mode: u32) -> PathBuf {
        let mut p = self.path.clone();
        for comp in Path::new(rel).components() {
            p.push(comp);
            if !p.exists() {
                fs::create_dir(&p).unwrap();
                set_mode(&p, 0o700);
            }
        }
        set_mode(&p, mode);
        p
    }

    /// Writes `rel` with `bytes` and sets its mode.
    pub fn file(&self, rel: &str, bytes: &[u8], mode: u32) -> PathBuf {
        let p = self.path.join(rel);
        fs::write(&p, bytes).unwrap();
        set_mode(&p, mode);
        p
    }

    /// Creates the symbolic link `rel` pointing at `target`.
    pub fn link(&self, rel: &str, target: &Path) -> PathBuf {
        let p = self.path.join(rel);
        symlink(target, &p).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

pub fn set_mode(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

pub fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

/// A uid other than ours to chown fixtures to, or `None` (with the reason printed) when this process
/// cannot chown, in which case "foreign owner" tests skip.
pub fn foreign_uid(test: &str) -> Option<u32> {
    if nix::unistd::geteuid().is_root() {
        Some(65534)
    } else {
        println!("{test}: skipped: chown to another uid needs root");
        None
    }
}

pub fn chown(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), None).unwrap();
}

/// Sorted entry names of a directory, for "nothing was touched" assertions.
pub fn names(p: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(p).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}
