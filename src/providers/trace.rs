//! Trace context of provider calls (providers.md §11, execution.md §3.4, pcc.md §12): the call's trace id
//! and the `traceparent` minted per provider call.
//!
//! Owns the two random draws and the spelling `00-<trace>-<parent>-01`. Does not decide which trace id a
//! call has (the fronts do: `/mcp` mints one, PCC passes the stream's).

/// A call's trace id: 16 bytes, not all zero, spelled as 32 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TraceId([u8; 16]);

impl std::fmt::Debug for TraceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Trace ids never reach logs (pcc.md §12: never in the event log either).
        f.write_str("TraceId(<hidden>)")
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(2 * bytes.len());
    crate::json::push_hex(&mut hex, bytes);
    hex
}

/// `00-` + 32 + `-` + 16 + `-01`.
const TRACEPARENT_LEN: usize = 55;

fn nonzero<const N: usize>() -> [u8; N] {
    loop {
        let bytes: [u8; N] = rand::random();
        if bytes.iter().any(|b| *b != 0) {
            return bytes;
        }
    }
}

impl TraceId {
    /// 16 fresh random bytes (execution.md §2 for `/mcp`; the PCC fallback of pcc.md §12). `rand`'s
    /// thread generator is a CSPRNG seeded from the operating system; an all-zero draw is drawn again,
    /// since W3C forbids it.
    pub fn fresh() -> TraceId {
        TraceId(nonzero())
    }

    /// pcc.md §12: `text` when it is 32 lowercase hexadecimal characters, not all zero; otherwise a fresh
    /// id (absent, uppercase, wrong length or all zero is never an error and is not reported).
    pub fn from_connect(text: Option<&str>) -> TraceId {
        text.and_then(TraceId::parse).unwrap_or_else(TraceId::fresh)
    }

    /// 32 lowercase hexadecimal characters, as `traceparent` carries it (providers.md §11).
    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    /// `text` when it is exactly 32 lowercase hex characters, not all zero (pcc.md §12), else `None`.
    pub fn parse(text: &str) -> Option<TraceId> {
        let bytes = text.as_bytes();
        if bytes.len() != 32 || !bytes.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)) {
            return None;
        }
        let mut id = [0u8; 16];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let pair = std::str::from_utf8(pair).ok()?;
            id[i] = u8::from_str_radix(pair, 16).ok()?;
        }
        id.iter().any(|b| *b != 0).then_some(TraceId(id))
    }

    /// `00-<trace id>-<fresh parent id>-01`: a new parent id (8 random bytes, not all zero) per call.
    pub fn traceparent(&self) -> String {
        self.traceparent_with(nonzero())
    }

    /// The spelling of [`TraceId::traceparent`] for a given parent id, in one allocation of its exact
    /// length (55 bytes), without the formatting machinery: every provider call writes one.
    fn traceparent_with(&self, parent: [u8; 8]) -> String {
        let mut text = String::with_capacity(TRACEPARENT_LEN);
        text.push_str("00-");
        crate::json::push_hex(&mut text, &self.0);
        text.push('-');
        crate::json::push_hex(&mut text, &parent);
        text.push_str("-01");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traceparent_is_spelled_as_w3c_writes_it() {
        let cases =
            [([0x4b; 16], [0x01; 8]), ([0xff; 16], [0x00, 0, 0, 0, 0, 0, 0, 0x0a]), ([0x00; 16], [0xab; 8])];
        for (trace, parent) in cases {
            let text = TraceId(trace).traceparent_with(parent);
            assert_eq!(text, format!("00-{}-{}-01", hex(&trace), hex(&parent)));
            assert_eq!((text.len(), text.capacity()), (TRACEPARENT_LEN, TRACEPARENT_LEN));
        }
        assert_eq!(
            TraceId([0x4b; 16]).traceparent_with([0x01; 8]),
            "00-4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b-0101010101010101-01"
        );
    }

    #[test]
    fn parse_and_traceparent_table() {
        let cases = [
            ("4bf92f3577b34da6a3ce929d0e0e4736", true),
            ("4BF92F3577B34DA6A3CE929D0E0E4736", false),
            ("00000000000000000000000000000000", false),
            ("4bf92f3577b34da6a3ce929d0e0e473", false),
            ("", false),
        ];
        for (text, ok) in cases {
            assert_eq!(TraceId::parse(text).is_some(), ok, "{text}");
        }
        let id = TraceId::parse("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
        let (a, b) = (id.traceparent(), id.traceparent());
        assert!(a.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-") && a.ends_with("-01") && a.len() == 55);
        assert_ne!(a, b, "a fresh parent id per provider call");
        assert_ne!(&a[36..52], "0000000000000000");
    }

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
        assert_eq!(format!("{:?}", TraceId::fresh()), "TraceId(<hidden>)");
    }
}
