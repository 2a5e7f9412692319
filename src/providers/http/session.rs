//! The legacy session of one HTTP acquisition (providers.md §5.4): the `Mcp-Session-Id` value rule, the
//! current id with its generation, the single re-initialisation after a loss, and the 30,000 ms guard.
//!
//! This file owns the state machine only. The re-initialisation exchanges themselves are `acquire.rs`,
//! and what a failed one does to the acquisition (loss, fence) is `transport.rs`.

use std::sync::Arc;
use std::time::Duration;

use hyper::HeaderMap;
use tokio::sync::watch;
use tokio::time::Instant;

/// A loss detected this soon after a re-initialisation completed is fatal (providers.md §5.4, §15).
pub const REINIT_GUARD: Duration = Duration::from_millis(30_000);
/// Legacy session id length bound (providers.md §15).
pub const MAX_SESSION_ID: usize = 1_024;

/// A present `Mcp-Session-Id` that breaks the value rule: the acquisition fails `mcp_protocol_error`. Which
/// part of the rule, for the debug log; never the value (a session id is a bearer of the session).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSessionId {
    #[error("the Mcp-Session-Id header is repeated")]
    Repeated,
    #[error("the Mcp-Session-Id value is empty")]
    Empty,
    #[error("the Mcp-Session-Id value has {0} bytes, more than 1,024")]
    TooLong(usize),
    #[error("the Mcp-Session-Id value has a byte outside 0x21..0x7E at offset {0}")]
    Byte(usize),
}

/// The `Mcp-Session-Id` of an `initialize` response (providers.md §5.4): `Ok(None)` when absent, an error
/// when present but not 1..1024 bytes of 0x21..0x7E (or repeated).
pub fn session_id(headers: &HeaderMap) -> Result<Option<Arc<str>>, InvalidSessionId> {
    let mut values = headers.get_all("mcp-session-id").iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(InvalidSessionId::Repeated);
    }
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return Err(InvalidSessionId::Empty);
    }
    if bytes.len() > MAX_SESSION_ID {
        return Err(InvalidSessionId::TooLong(bytes.len()));
    }
    if let Some(at) = bytes.iter().position(|b| !(0x21..=0x7e).contains(b)) {
        return Err(InvalidSessionId::Byte(at));
    }
    // Only visible ASCII, so the conversion cannot fail; the first byte stands for the impossible case.
    std::str::from_utf8(bytes)
        .map(|s| Some(Arc::from(s)))
        .map_err(|e| InvalidSessionId::Byte(e.valid_up_to()))
}

/// The session as requests see it.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// Requests proceed with this id (if the server assigned one); `generation` counts re-initialisations.
    Ready { id: Option<Arc<str>>, generation: u64, reinitialised_at: Option<Instant> },
    /// A re-initialisation is running: new requests wait (providers.md §5.4).
    Reinitialising { generation: u64 },
    /// The acquisition was lost.
    Lost,
}

/// What a detected loss leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnLoss {
    /// This caller runs the re-initialisation.
    Reinitialise,
    /// The id this request carried was already replaced, or a re-initialisation is running.
    Nothing,
    /// A second loss within 30,000 ms: transport-owner loss with fault `transport_error` (providers.md §5.4).
    Fatal,
}

/// The session cell.
pub struct Session {
    state: watch::Sender<State>,
}

impl Session {
    pub fn new(id: Option<Arc<str>>) -> Session {
        let (state, _) = watch::channel(State::Ready { id, generation: 0, reinitialised_at: None });
        Session { state }
    }

    /// The current id and generation, waiting while a re-initialisation runs; `None` once lost.
    pub async fn ready(&self) -> Option<(Option<Arc<str>>, u64)> {
        let mut rx = self.state.subscribe();
        let seen = rx.wait_for(|s| !matches!(s, State::Reinitialising { .. })).await.ok()?;
        match &*seen {
            State::Ready { id, generation, .. } => Some((id.clone(), *generation)),
            _ => None,
        }
    }

    /// The id now, without waiting (for cancellations and the closing `DELETE`).
    pub fn current(&self) -> Option<Arc<str>> {
        match &*self.state.borrow() {
            State::Ready { id, .. } => id.clone(),
            _ => None,
        }
    }

    /// A 404 answered a request that carried the id of `generation` (providers.md §5.4).
    pub fn lost(&self, generation: u64) -> OnLoss {
        let mut verdict = OnLoss::Nothing;
        self.state.send_if_modified(|state| match state {
            State::Ready { generation: current, reinitialised_at, .. } if *current == generation => {
                if reinitialised_at.is_some_and(|at| at.elapsed() < REINIT_GUARD) {
                    verdict = OnLoss::Fatal;
                    return false;
                }
                verdict = OnLoss::Reinitialise;
                *state = State::Reinitialising { generation };
                true
            }
            _ => false,
        });
        verdict
    }

    /// The re-initialisation succeeded with equal facts: the new id replaces the old one.
    pub fn replace(&self, id: Option<Arc<str>>) {
        self.state.send_modify(|state| {
            let generation = match state {
                State::Ready { generation, .. } | State::Reinitialising { generation } => *generation + 1,
                State::Lost => return,
            };
            *state = State::Ready { id, generation, reinitialised_at: Some(Instant::now()) };
        });
    }

    /// The acquisition is lost: waiting requests stop waiting.
    pub fn seal(&self) {
        self.state.send_replace(State::Lost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn session_id_rule() {
        let long = "a".repeat(MAX_SESSION_ID);
        let over = "a".repeat(MAX_SESSION_ID + 1);
        type Row<'a> = (&'a [&'a [u8]], Result<Option<&'a str>, InvalidSessionId>);
        let rows: &[Row] = &[
            (&[], Ok(None)),
            (&[b"abc-123"], Ok(Some("abc-123"))),
            (&[b"!~"], Ok(Some("!~"))),
            (&[long.as_bytes()], Ok(Some(long.as_str()))),
            (&[over.as_bytes()], Err(InvalidSessionId::TooLong(1_025))),
            (&[b""], Err(InvalidSessionId::Empty)),
            (&[b"a b"], Err(InvalidSessionId::Byte(1))),
            (&[b"a\tb"], Err(InvalidSessionId::Byte(1))),
            (&[b"\xc3\xa9"], Err(InvalidSessionId::Byte(0))),
            (&[b"a", b"b"], Err(InvalidSessionId::Repeated)),
        ];
        for (values, expected) in rows {
            let mut map = HeaderMap::new();
            for v in *values {
                map.append("mcp-session-id", HeaderValue::from_bytes(v).unwrap());
            }
            let got = session_id(&map);
            assert_eq!(got.as_ref().map(|o| o.as_deref()), expected.as_ref().map(|o| *o), "{values:?}");
        }
        // What the debug log says of each refusal: the rule and a position, never the value.
        let said = [
            InvalidSessionId::Repeated,
            InvalidSessionId::Empty,
            InvalidSessionId::TooLong(1_025),
            InvalidSessionId::Byte(1),
        ]
        .map(|e| e.to_string());
        assert_eq!(
            said,
            [
                "the Mcp-Session-Id header is repeated",
                "the Mcp-Session-Id value is empty",
                "the Mcp-Session-Id value has 1025 bytes, more than 1,024",
                "the Mcp-Session-Id value has a byte outside 0x21..0x7E at offset 1",
            ]
        );
    }

    #[tokio::test]
    async fn one_reinitialisation_per_id_and_the_guard() {
        let session = Session::new(Some("one".into()));
        assert_eq!(session.ready().await, Some((Some("one".into()), 0)));
        assert_eq!(session.lost(0), OnLoss::Reinitialise);
        // Other requests that carried the old id do not start a second one.
        assert_eq!(session.lost(0), OnLoss::Nothing);
        session.replace(Some("two".into()));
        assert_eq!(session.ready().await, Some((Some("two".into()), 1)));
        assert_eq!(session.lost(0), OnLoss::Nothing, "a stale generation");
        assert_eq!(session.lost(1), OnLoss::Fatal, "within 30 s of the re-initialisation");
        session.seal();
        assert_eq!(session.ready().await, None);
        assert_eq!(session.current(), None);
    }
}
