//! The harness of the generated-input properties (issue 18; docs/reliability.md, "Generated inputs"):
//! one runner per property, its case count, its seed, and the count of inputs it tried.
//!
//! Owns how many inputs a property gets and how they are drawn, and the byte-level generators several
//! decoder families share (mutation of a valid document, interesting bytes). It does not own any property:
//! each lives next to the decoder it tests (`*_props.rs`), and every such test is named `prop_…` so that
//! `cargo test --lib prop_` selects them all (`scripts/fuzz`).
//!
//! Cases: `PROPTEST_CASES` when set (the long budget of `scripts/fuzz`), else the property's own small
//! default (the CI budget: all properties together run in about a minute in a debug build). Seed: fixed
//! (deterministic CI), or `PTC_FUZZ_SEED` (any text, hashed) so that long runs explore fresh inputs.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use sha2::{Digest, Sha256};

/// Runs `property` over `default_cases` inputs of `strategy` (or `PROPTEST_CASES`), failing the test
/// with the shrunk counterexample. A panic inside `property` is a failure too (proptest catches it).
/// Prints `prop-inputs <name> <tried> <ms> <slowest input in µs>` on stderr, which `scripts/fuzz` collects.
pub(crate) fn check<S>(
    name: &str,
    default_cases: u32,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: Debug,
{
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases);
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let rng = match std::env::var("PTC_FUZZ_SEED") {
        Ok(seed) => TestRng::from_seed(RngAlgorithm::ChaCha, &Sha256::digest(format!("{seed}/{name}"))),
        Err(_) => TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    };
    let mut runner = TestRunner::new_with_rng(config, rng);
    let tried = AtomicU64::new(0);
    // The slowest single input, so that a long run shows no input near a hang.
    let slowest = AtomicU64::new(0);
    let started = Instant::now();
    let result = runner.run(&strategy, |input| {
        tried.fetch_add(1, Ordering::Relaxed);
        let one = Instant::now();
        let verdict = property(input);
        slowest.fetch_max(u64::try_from(one.elapsed().as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
        verdict
    });
    eprintln!(
        "prop-inputs {name} {} {} {}",
        tried.load(Ordering::Relaxed),
        started.elapsed().as_millis(),
        slowest.load(Ordering::Relaxed)
    );
    if let Err(failure) = result {
        panic!("{name}: {failure:?}");
    }
}

/// Bytes that matter to the text decoders: JSON and HTTP delimiters, digits, escapes, CR/LF, NUL, DEL,
/// a UTF-8 lead and continuation, an encoded surrogate's bytes, a BOM byte, and any byte at all.
pub(crate) fn interesting_byte() -> impl Strategy<Value = u8> {
    const BYTES: &[u8] =
        b"{}[]\",:\\ 0123456789-+.eEtfnulr\r\n\t\x00\x7f\x80\xbf\xc3\xa9\xed\xa0\xef\xbb\xf4\x90\xff:;=?/ ";
    prop_oneof![3 => select(BYTES), 1 => any::<u8>()]
}

/// One edit of a byte string: overwrite, insert, delete, or duplicate a span (positions taken modulo the
/// length at the time of the edit).
#[derive(Clone, Debug)]
pub(crate) enum Edit {
    Set(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Repeat(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), interesting_byte()).prop_map(|(at, b)| Edit::Set(at, b)),
        (any::<usize>(), interesting_byte()).prop_map(|(at, b)| Edit::Insert(at, b)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Edit::Repeat(at, n)),
    ]
}

/// Applies `edits` to `bytes` in order.
pub(crate) fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = bytes.len();
        match *e {
            Edit::Set(at, b) if len > 0 => bytes[at % len] = b,
            Edit::Insert(at, b) => bytes.insert(at % (len + 1), b),
            Edit::Delete(at) if len > 0 => {
                bytes.remove(at % len);
            }
            Edit::Repeat(at, n) if len > 0 => {
                let start = at % len;
                let end = (start + n).min(len);
                let span = bytes[start..end].to_vec();
                bytes.splice(end..end, span);
            }
            _ => {}
        }
    }
    bytes
}

/// `base` unchanged (one input in four) or with one to four edits.
pub(crate) fn mutated(base: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    (base, prop_oneof![1 => Just(0usize), 3 => 1usize..5])
        .prop_flat_map(|(bytes, n)| (Just(bytes), vec(edit(), n)))
        .prop_map(|(bytes, edits)| apply(bytes, &edits))
}

/// Split points for feeding `len` bytes in pieces: sorted, within `0..=len`.
pub(crate) fn cuts(len: usize, raw: &[usize]) -> Vec<usize> {
    let mut at: Vec<usize> = raw.iter().map(|r| r % (len + 1)).collect();
    at.sort_unstable();
    at
}

/// `bytes` in the pieces that `cuts` delimit (some possibly empty).
pub(crate) fn pieces<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for &to in cuts {
        out.push(&bytes[from..to]);
        from = to;
    }
    out.push(&bytes[from..]);
    out
}

/// Strings near the rules of `Mcp-Param-*` values (http-mcp.md §9.2): printable ASCII, control and non-ASCII
/// characters, and Base64 sentinels.
pub(crate) fn param_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,16}",
        "[ -~\t\r\né😀\u{0}\u{7f}\u{feff}]{0,16}",
        "=\\?base64\\?[A-Za-z0-9+/=]{0,8}\\?=",
    ]
}
