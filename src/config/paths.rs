//! Path anchoring (config.md §3): purely lexical, never resolving links, never touching the filesystem.

use std::path::{Component, Path, PathBuf};

/// `anchor(p, base)` of config.md §3.2: `p` if absolute, else `base/p`, normalised lexically (repeated
/// `/` collapsed, `.` dropped, `..` removes the previous segment and stays at the root, no trailing `/`).
pub fn anchor(p: &Path, base: &Path) -> PathBuf {
    let joined = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
    normalise(&joined)
}

/// The lexical normalisation of step 2 of config.md §3.2.
pub fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in p.components() {
        match component {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(segment) => out.push(segment),
        }
    }
    out
}

/// The directory of a document (config.md §3.2): its normalised path without the last segment.
pub fn document_dir(document: &Path) -> PathBuf {
    let normal = normalise(document);
    match normal.parent() {
        Some(parent) => parent.to_path_buf(),
        None => normal,
    }
}
