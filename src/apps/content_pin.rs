//! The application content digest (pins.md §6): the records of one application, their framing into one
//! domain-separated stream, and the qualified SHA-256 of that stream; plus the stage 5d comparison
//! (pins.md §9.1).
//!
//! Owns which records exist, their order, the duplicate rule and the 8,388,608-byte stream bound. Does not
//! read files (the bytes come from [`Closure`], read once) and does not own `TCJ` or the hash primitives
//! (`crate::json::canonical`).

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::closure::Closure;
use super::error::{fail, AppDetail, AppError, AppErrorKind};
use crate::config::manifest::{Component, Manifest, Workflow};
use crate::json::canonical::LABEL_APPLICATION_CONTENT;
use crate::json::{qualified, typed_canonical};

/// pins.md §6.2 / config.md §6.3: the framed stream is at most 8,388,608 bytes.
pub const MAX_STREAM_BYTES: usize = 8_388_608;

/// Record kinds of pins.md §6.1 (0x03, 0x07 and 0x08 are reserved and never produced).
mod kind {
    pub const MANIFEST: u8 = 0x01;
    pub const COMPONENT_SOURCE: u8 = 0x02;
    pub const INPUT_CONTRACT: u8 = 0x04;
    pub const RESULT_CONTRACT: u8 = 0x05;
    pub const DEPENDENCIES: u8 = 0x06;
}

/// One record `(kind, name, payload)`.
struct Record<'a> {
    kind: u8,
    name: String,
    payload: Payload<'a>,
}

/// Payloads either borrow closure bytes or own a `TCJ` encoding built here.
enum Payload<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Payload<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Payload::Borrowed(b) => b,
            Payload::Owned(b) => b,
        }
    }
}

/// The records of pins.md §6.1, sorted by `(kind byte, name bytes)`; a repeated `(kind, name)` is refused.
fn records<'a>(manifest: &Manifest, closure: &'a Closure) -> Result<Vec<Record<'a>>, AppError> {
    let file = |path: &str| {
        closure.bytes(path).map(Payload::Borrowed).ok_or(AppError::new(AppErrorKind::ClosureUnreadable))
    };
    let mut out = vec![
        // The decoded manifest exactly as written, no defaults applied.
        Record {
            kind: kind::MANIFEST,
            name: String::new(),
            payload: Payload::Owned(typed_canonical(&manifest.document)),
        },
        Record {
            kind: kind::INPUT_CONTRACT,
            name: "input".into(),
            payload: file(&manifest.contracts.input_schema.path)?,
        },
        Record {
            kind: kind::RESULT_CONTRACT,
            name: "result".into(),
            payload: file(&manifest.contracts.result_schema.path)?,
        },
    ];
    let mut add_environment = |prefix: &str, components: &[Component]| -> Result<(), AppError> {
        for c in components {
            let name = format!("{prefix}{}", c.id);
            let deps = Value::Array(c.dependencies.iter().map(|d| Value::String(d.clone())).collect());
            out.push(Record { kind: kind::COMPONENT_SOURCE, name: name.clone(), payload: file(&c.path)? });
            out.push(Record {
                kind: kind::DEPENDENCIES,
                name,
                payload: Payload::Owned(typed_canonical(&deps)),
            });
        }
        Ok(())
    };
    if let Workflow::Luau { components, .. } = &manifest.workflow {
        add_environment("workflow/", components)?;
    }
    for (mission, m) in &manifest.missions {
        add_environment(&format!("mission/{mission}/"), &m.components)?;
    }
    out.sort_by(|a, b| (a.kind, a.name.as_bytes()).cmp(&(b.kind, b.name.as_bytes())));
    let duplicate = out.windows(2).any(|w| match w {
        [a, b] => a.kind == b.kind && a.name == b.name,
        _ => false,
    });
    if duplicate {
        // pins.md §6.2: cannot arise from a valid manifest; refused.
        return fail(AppErrorKind::ContentRecordDuplicate);
    }
    Ok(out)
}

/// Writes the framed stream of pins.md §6.2 into `sink`, after checking its length against the bound.
fn frame(records: &[Record<'_>], sink: &mut dyn FnMut(&[u8])) -> Result<(), AppError> {
    let too_large = || AppError::new(AppErrorKind::ContentStreamTooLarge);
    let header = LABEL_APPLICATION_CONTENT.len() + 1 + 4;
    let total = records.iter().try_fold(header, |acc, r| {
        acc.checked_add(1 + 4 + 8)?.checked_add(r.name.len())?.checked_add(r.payload.bytes().len())
    });
    match total {
        Some(n) if n <= MAX_STREAM_BYTES => {}
        _ => return Err(too_large()),
    }
    let count = u32::try_from(records.len()).map_err(|_| too_large())?;
    sink(LABEL_APPLICATION_CONTENT.as_bytes());
    sink(&[0x00]);
    sink(&count.to_be_bytes());
    for r in records {
        let payload = r.payload.bytes();
        let name_len = u32::try_from(r.name.len()).map_err(|_| too_large())?;
        let payload_len = u64::try_from(payload.len()).map_err(|_| too_large())?;
        sink(&[r.kind]);
        sink(&name_len.to_be_bytes());
        sink(r.name.as_bytes());
        sink(&payload_len.to_be_bytes());
        sink(payload);
    }
    Ok(())
}

/// The framed content stream itself (pins.md §6.2), for inspection and tests; [`digest`] hashes the same
/// bytes without keeping them.
pub fn stream(manifest: &Manifest, closure: &Closure) -> Result<Vec<u8>, AppError> {
    let records = records(manifest, closure)?;
    let mut out = Vec::new();
    frame(&records, &mut |b| out.extend_from_slice(b))?;
    Ok(out)
}

/// The qualified content pin `"sha256:" ‖ hex(SHA-256(stream))` of pins.md §6.2.
pub fn digest(manifest: &Manifest, closure: &Closure) -> Result<String, AppError> {
    let records = records(manifest, closure)?;
    let mut hasher = Sha256::new();
    frame(&records, &mut |b| hasher.update(b))?;
    Ok(qualified(&hasher.finalize().into()))
}

/// Stage 5d (pins.md §9.1): byte equality of the qualified strings. `expected` is `None` only in
/// discovery mode, where the comparison does not run (pins.md §10.1 step 4).
pub fn compare(computed: &str, expected: Option<&str>) -> Result<(), AppError> {
    match expected {
        Some(expected) if expected.as_bytes() != computed.as_bytes() => {
            let detail = AppDetail::Digest {
                expected: expected.to_owned(),
                computed: computed.to_owned(),
                broken: None,
            };
            Err(AppError::with_detail(AppErrorKind::ContentDigestMismatch, detail))
        }
        _ => Ok(()),
    }
}
