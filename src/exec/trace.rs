//! The trace id of one call (execution.md §2, providers.md §11, pcc.md §12).
//!
//! Owns the value and its two sources: 16 fresh random bytes for a `/mcp` call, and the stream's trace id
//! for a PCC call (`Connect.trace_context.trace_id` when it is 32 lowercase hexadecimal characters, not
//! all zero; otherwise fresh). It does not own `traceparent` itself (the parent id is minted per provider
//! call, `crate::providers`), and trace ids are never written to the event log (pcc.md §12).

/// A call's trace id: 16 bytes, never all zero.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TraceId([u8; 16]);

impl TraceId {
    /// 16 fresh random bytes (execution.md §2). `rand`'s thread generator is a CSPRNG seeded from the
    /// operating system; an all-zero draw (probability 2^-128) is drawn again, since W3C forbids it.
    pub fn fresh() -> TraceId {
        loop {
            let bytes: [u8; 16] = rand::random();
            if bytes != [0; 16] {
                return TraceId(bytes);
            }
        }
    }

    /// pcc.md §12: `text` when it is 32 lowercase hexadecimal characters, not all zero; otherwise a fresh
    /// id (absent, uppercase, wrong length or all zero is never an error and is not reported).
    pub fn from_connect(text: Option<&str>) -> TraceId {
        text.and_then(TraceId::parse_lower_hex).unwrap_or_else(TraceId::fresh)
    }

    fn parse_lower_hex(text: &str) -> Option<TraceId> {
        let digits = text.as_bytes();
        if digits.len() != 32 {
            return None;
        }
        let nibble = |b: u8| match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            _ => None,
        };
        let mut bytes = [0u8; 16];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
            *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        (bytes != [0; 16]).then_some(TraceId(bytes))
    }

    /// 32 lowercase hexadecimal characters, as `traceparent` carries it (providers.md §11).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Never printed in full: trace ids stay out of logs (pcc.md §12, §16).
impl std::fmt::Debug for TraceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceId(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_trace_id_is_taken_only_when_valid() {
        // pcc.md §12 and §17 V45/V46.
        let given = "4bf92f3577b34da6a3ce929d0e0e4736";
        assert_eq!(TraceId::from_connect(Some(given)).hex(), given);
        let replaced = [
            None,
            Some("4BF92F3577B34DA6A3CE929D0E0E4736"),
            Some("4bf92f3577b34da6a3ce929d0e0e473"),
            Some("4bf92f3577b34da6a3ce929d0e0e47366"),
            Some("00000000000000000000000000000000"),
            Some("4bf92f3577b34da6a3ce929d0e0e473g"),
            Some(""),
        ];
        for text in replaced {
            let id = TraceId::from_connect(text).hex();
            assert_eq!(id.len(), 32, "{text:?}");
            assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{text:?}");
            assert_ne!(id, "00000000000000000000000000000000");
            assert_ne!(Some(id.as_str()), text, "{text:?}");
            assert_ne!(id, given.to_owned(), "{text:?}");
        }
        assert_ne!(TraceId::fresh(), TraceId::fresh());
        assert_eq!(format!("{:?}", TraceId::fresh()), "TraceId(..)");
    }
}
