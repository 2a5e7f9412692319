//! The per-transport stderr ring buffer (providers.md §4.2): the newest 65,536 bytes the child wrote and a
//! `truncated` flag set the first time a byte is discarded.
//!
//! This file owns only the buffer. The draining task lives in `child.rs`; the opt-in `stderr_tail` event
//! that is the buffer's only way out of the process belongs to the event log. Content is never parsed.

use std::collections::VecDeque;

/// The ring capacity (providers.md §15).
pub const STDERR_RING_BYTES: usize = 65_536;

/// Newest-bytes-win buffer of child stderr.
#[derive(Debug, Default)]
pub struct StderrRing {
    bytes: VecDeque<u8>,
    truncated: bool,
}

impl StderrRing {
    /// Append bytes the child wrote, discarding the oldest beyond the capacity.
    pub fn push(&mut self, chunk: &[u8]) {
        let keep = chunk.len().min(STDERR_RING_BYTES);
        if chunk.len() > keep {
            self.truncated = true;
        }
        let incoming = &chunk[chunk.len() - keep..];
        let overflow = (self.bytes.len() + incoming.len()).saturating_sub(STDERR_RING_BYTES);
        if overflow > 0 {
            self.truncated = true;
            self.bytes.drain(..overflow);
        }
        self.bytes.extend(incoming);
    }

    /// The buffered bytes, oldest first, and whether any byte was ever discarded.
    pub fn snapshot(&self) -> (Vec<u8>, bool) {
        (self.bytes.iter().copied().collect(), self.truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (chunks, expected length, expected last byte, truncated)
    type Case = (Vec<Vec<u8>>, usize, Option<u8>, bool);

    #[test]
    fn ring_table() {
        let big = vec![b'a'; STDERR_RING_BYTES];
        let cases: Vec<Case> = vec![
            (vec![], 0, None, false),
            (vec![b"abc".to_vec()], 3, Some(b'c'), false),
            (vec![big.clone()], STDERR_RING_BYTES, Some(b'a'), false),
            (vec![big.clone(), b"z".to_vec()], STDERR_RING_BYTES, Some(b'z'), true),
            (vec![[big.clone(), b"yz".to_vec()].concat()], STDERR_RING_BYTES, Some(b'z'), true),
        ];
        for (chunks, len, last, truncated) in cases {
            let mut ring = StderrRing::default();
            for chunk in &chunks {
                ring.push(chunk);
            }
            let (bytes, flag) = ring.snapshot();
            assert_eq!((bytes.len(), bytes.last().copied(), flag), (len, last, truncated));
        }
    }

    #[test]
    fn newest_bytes_are_kept_in_order() {
        let mut ring = StderrRing::default();
        ring.push(&vec![b'o'; STDERR_RING_BYTES - 2]);
        ring.push(b"1234");
        let (bytes, truncated) = ring.snapshot();
        assert!(truncated);
        assert_eq!(&bytes[bytes.len() - 4..], b"1234");
        assert_eq!(&bytes[..2], b"oo");
    }
}
