//! The request table of one transport (providers.md §4.3, §10): id allocation (1, 2, 3, … never reused),
//! per-request write state, delivery of responses, and sealing on loss.
//!
//! This file owns only bookkeeping under one lock. It does no I/O and knows nothing about bounds other
//! than what the owner tells it; the in-flight semaphore lives in `transport.rs`.

use std::collections::HashMap;

use tokio::sync::oneshot;

use super::failure::{CallFailure, Dispatch, FailureClass};
use super::framing::{Message, WireId};

/// How far the request's line has been written (providers.md §10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteState {
    Queued,
    Writing,
    Written,
}

/// A response as received: the message and its size in bytes (the line without terminator,
/// providers.md §8.2).
#[derive(Debug)]
pub struct Reply {
    pub message: Message,
    pub size: usize,
    /// The message's bytes as received (the stdio line, the HTTP body or event data), for inspection
    /// (traces.md §8); moved, never copied.
    pub raw: Vec<u8>,
}

/// What a waiter receives.
pub type Delivery = Result<Reply, CallFailure>;

struct Entry {
    state: WriteState,
    waiter: oneshot::Sender<Delivery>,
}

/// What to do with a response the child sent.
#[derive(Debug, PartialEq, Eq)]
pub enum Routed {
    Delivered,
    /// Issued but already settled: discarded silently (providers.md §4.3).
    Discarded,
    /// Never issued, or `id: null` outside the probe: a protocol violation (providers.md §4.3).
    Violation,
}

/// The table.
#[derive(Default)]
pub struct Table {
    last_id: u64,
    entries: HashMap<u64, Entry>,
    /// The id of the pending era probe, the only request an `"id": null` error may answer
    /// (providers.md §4.3, §6.2).
    probe: Option<u64>,
    sealed: Option<FailureClass>,
}

impl Table {
    /// Register a new request; `None` once sealed.
    pub fn register(&mut self, probe: bool) -> Option<(u64, oneshot::Receiver<Delivery>)> {
        if self.sealed.is_some() {
            return None;
        }
        self.last_id += 1;
        let id = self.last_id;
        let (waiter, rx) = oneshot::channel();
        self.entries.insert(id, Entry { state: WriteState::Queued, waiter });
        if probe {
            self.probe = Some(id);
        }
        Some((id, rx))
    }

    pub fn is_sealed(&self) -> bool {
        self.sealed.is_some()
    }

    /// The writer is about to write `id`'s line; `false` when it was abandoned while queued.
    pub fn begin_write(&mut self, id: u64) -> bool {
        match self.entries.get_mut(&id) {
            Some(entry) => {
                entry.state = WriteState::Writing;
                true
            }
            None => false,
        }
    }

    pub fn end_write(&mut self, id: u64) {
        if let Some(entry) = self.entries.get_mut(&id) {
            entry.state = WriteState::Written;
        }
    }

    /// Abandon `id`: its entry is removed, so a late answer is discarded; the state says whether a
    /// cancellation must be sent. `None` when it already settled.
    pub fn abandon(&mut self, id: u64) -> Option<WriteState> {
        if self.probe == Some(id) {
            self.probe = None;
        }
        self.entries.remove(&id).map(|entry| entry.state)
    }

    /// Route one response message by its id (providers.md §4.3).
    pub fn route(&mut self, id: &WireId, reply: Reply) -> Routed {
        let key = match id {
            WireId::Number(n) if *n >= 1 && *n <= i128::from(self.last_id) => *n as u64,
            WireId::Null if matches!(reply.message, Message::Error { .. }) => match self.probe {
                Some(probe) => probe,
                None => return Routed::Violation,
            },
            _ => return Routed::Violation,
        };
        if self.probe == Some(key) {
            self.probe = None;
        }
        match self.entries.remove(&key) {
            Some(entry) => {
                // A waiter that has gone (its task ended) is the same as a settled entry.
                let _ = entry.waiter.send(Ok(reply));
                Routed::Delivered
            }
            None => Routed::Discarded,
        }
    }

    /// Seal on loss (providers.md §12.1 step 1): every pending request fails with `class`, dispatch `false`
    /// for lines not yet started and `unknown` for the others.
    pub fn seal(&mut self, class: FailureClass) {
        if self.sealed.is_some() {
            return;
        }
        self.sealed = Some(class);
        for (_, entry) in self.entries.drain() {
            let dispatch = match entry.state {
                WriteState::Queued => Dispatch::False,
                WriteState::Writing | WriteState::Written => Dispatch::Unknown,
            };
            let _ = entry.waiter.send(Err(CallFailure::new(class, dispatch)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    fn reply() -> Reply {
        Reply {
            message: Message::Result { id: WireId::Number(1), result: Value::Object(Map::new()) },
            size: 2,
            raw: Vec::new(),
        }
    }

    #[test]
    fn routing_table() {
        let mut table = Table::default();
        let (one, _rx1) = table.register(false).unwrap();
        let (two, _rx2) = table.register(false).unwrap();
        assert_eq!((one, two), (1, 2));
        let cases: &[(WireId, Routed)] = &[
            (WireId::Number(1), Routed::Delivered),
            (WireId::Number(1), Routed::Discarded),
            (WireId::Number(3), Routed::Violation),
            (WireId::Number(0), Routed::Violation),
            (WireId::Number(-1), Routed::Violation),
            (WireId::Other(Value::String("1".into())), Routed::Violation),
            (WireId::Null, Routed::Violation),
        ];
        for (id, expected) in cases {
            assert_eq!(&table.route(id, reply()), expected, "{id:?}");
        }
    }

    #[test]
    fn null_id_error_answers_only_the_probe() {
        let mut table = Table::default();
        let (_id, mut rx) = table.register(true).unwrap();
        let error = Reply {
            message: Message::Error { id: WireId::Null, code: -32600, data: None },
            size: 1,
            raw: Vec::new(),
        };
        assert_eq!(table.route(&WireId::Null, error), Routed::Delivered);
        assert!(rx.try_recv().unwrap().is_ok());
        let error = Reply {
            message: Message::Error { id: WireId::Null, code: -32600, data: None },
            size: 1,
            raw: Vec::new(),
        };
        assert_eq!(table.route(&WireId::Null, error), Routed::Violation);
    }

    #[test]
    fn sealing_fails_pending_requests_by_write_state() {
        let mut table = Table::default();
        let (_a, mut queued) = table.register(false).unwrap();
        let (b, mut written) = table.register(false).unwrap();
        assert!(table.begin_write(b));
        table.end_write(b);
        table.seal(FailureClass::McpTransportError);
        assert_eq!(queued.try_recv().unwrap().unwrap_err().dispatch, Dispatch::False);
        assert_eq!(written.try_recv().unwrap().unwrap_err().dispatch, Dispatch::Unknown);
        assert!(table.register(false).is_none());
        assert_eq!(table.abandon(b), None);
    }
}
