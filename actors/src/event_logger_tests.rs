//! The queue bound, the never-blocking emit, the parked writer (the test hook), ticks and the bounded close.

use super::*;
use std::sync::mpsc::{channel, Sender};

#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Write(u32),
    Tick,
    Dropped(u32),
    Close,
}

struct Probe(Sender<Seen>);

/// The queue's capacity in these tests.
const QUEUE_CAPACITY: usize = 256;

impl EventSink for Probe {
    type Record = u32;
    const QUEUE_CAPACITY: usize = QUEUE_CAPACITY;
    const INTERVAL: Duration = Duration::from_millis(1_000);
    fn write(&mut self, record: u32) {
        let _ = self.0.send(Seen::Write(record));
    }
    fn tick(&mut self) {
        let _ = self.0.send(Seen::Tick);
    }
    fn dropped(&mut self, record: u32) {
        let _ = self.0.send(Seen::Dropped(record));
    }
    fn close(&mut self, elapsed_ms: u64) {
        assert!((1..=1_000).contains(&elapsed_ms), "elapsed {elapsed_ms}");
        let _ = self.0.send(Seen::Close);
    }
}

fn started() -> (EventLogger<u32>, std::sync::mpsc::Receiver<Seen>) {
    let (tx, rx) = channel();
    (EventLogger::start(Probe(tx)).unwrap(), rx)
}

fn writes(seen: &[Seen]) -> Vec<u32> {
    seen.iter().filter_map(|s| if let Seen::Write(n) = s { Some(*n) } else { None }).collect()
}

#[test]
fn a_held_writer_keeps_at_most_the_queue_bound_from_a_burst() {
    let (log, rx) = started();
    assert!(log.hold(Duration::from_secs(5)));
    let accepted = (0..300u32).filter(|n| log.try_emit(*n)).count();
    assert_eq!(accepted, QUEUE_CAPACITY);
    log.release_hold();
    assert!(log.close(Duration::from_secs(5), Duration::from_secs(1)));
    let seen: Vec<Seen> = rx.try_iter().collect();
    assert_eq!(writes(&seen), (0..256).collect::<Vec<_>>(), "arrival order, the first 256");
    assert_eq!(seen.last(), Some(&Seen::Close));
}

#[test]
fn emitting_after_close_is_refused_without_blocking() {
    let (log, rx) = started();
    assert!(log.try_emit(1));
    assert!(log.close(Duration::from_secs(5), Duration::from_secs(1)));
    assert!(!log.try_emit(2));
    let seen: Vec<Seen> = rx.try_iter().collect();
    assert_eq!(seen, vec![Seen::Write(1), Seen::Close]);
}

#[test]
fn the_close_bound_drops_what_it_could_not_write() {
    let (log, rx) = started();
    assert!(log.hold(Duration::from_secs(5)));
    for n in 0..10u32 {
        assert!(log.try_emit(n));
    }
    // A zero bound: the writer is released after the deadline, so every queued record is dropped.
    assert!(log.close(Duration::ZERO, Duration::from_secs(5)));
    let seen: Vec<Seen> = rx.try_iter().collect();
    let dropped = seen.iter().filter(|s| matches!(s, Seen::Dropped(_))).count();
    assert_eq!(dropped, 10);
    assert!(writes(&seen).is_empty());
    assert_eq!(seen.last(), Some(&Seen::Close));
}

#[test]
fn a_tick_comes_about_one_interval_after_start() {
    let (log, rx) = started();
    let begun = Instant::now();
    let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(first, Seen::Tick);
    assert!(begun.elapsed() >= Duration::from_millis(900), "first tick 1,000 ms after the start");
    assert!(log.close(Duration::from_secs(1), Duration::from_secs(1)));
}

#[test]
fn a_lost_writer_turns_emits_into_drops() {
    struct Panics;
    impl EventSink for Panics {
        type Record = u32;
        const QUEUE_CAPACITY: usize = QUEUE_CAPACITY;
        const INTERVAL: Duration = Duration::from_millis(1_000);
        fn write(&mut self, _: u32) {
            panic!("writer lost");
        }
        fn tick(&mut self) {}
        fn dropped(&mut self, _: u32) {}
        fn close(&mut self, _: u64) {}
    }
    let log = EventLogger::start(Panics).unwrap();
    assert!(log.try_emit(1));
    let deadline = Instant::now() + Duration::from_secs(5);
    // Once the thread is gone the channel is disconnected; emits must fail, never block.
    while log.try_emit(2) {
        assert!(Instant::now() < deadline, "emits kept succeeding after the writer died");
        std::thread::yield_now();
    }
    assert!(!log.close(Duration::from_millis(10), Duration::from_millis(10)));
}
