//! The committer against an in-memory store whose syncs can be held or made to fail.

use super::*;
use std::collections::BTreeMap;
use std::sync::Condvar;
use std::time::{Duration, Instant};

/// What the memory store saw, shared with the test.
#[derive(Default)]
struct Disk {
    segments: BTreeMap<u64, Vec<u8>>,
    /// Bytes of each segment that were synced.
    synced: BTreeMap<u64, usize>,
    active: u64,
    writes: u64,
    /// The size of each write, in order.
    write_sizes: Vec<usize>,
    /// Syncs are held while true.
    hold: bool,
    /// The sync with this index (0-based) fails.
    fail_sync: Option<u64>,
    syncs_seen: u64,
}

#[derive(Clone, Default)]
struct Shared(Arc<(Mutex<Disk>, Condvar)>);

impl Shared {
    fn with<T>(&self, f: impl FnOnce(&mut Disk) -> T) -> T {
        let mut disk = self.0 .0.lock().unwrap();
        let out = f(&mut disk);
        self.0 .1.notify_all();
        out
    }
}

struct MemStore(Shared);

impl SegmentStore for MemStore {
    fn write_active(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.with(|d| {
            d.writes += 1;
            d.write_sizes.push(bytes.len());
            let active = d.active;
            d.segments.entry(active).or_default().extend_from_slice(bytes);
        });
        Ok(())
    }
    fn sync_active(&mut self) -> io::Result<()> {
        let (lock, cv) = &*self.0 .0;
        let mut d = lock.lock().unwrap();
        while d.hold {
            d = cv.wait(d).unwrap();
        }
        let index = d.syncs_seen;
        d.syncs_seen += 1;
        if d.fail_sync == Some(index) {
            return Err(io::Error::other("injected"));
        }
        let active = d.active;
        let len = d.segments.get(&active).map_or(0, Vec::len);
        d.synced.insert(active, len);
        Ok(())
    }
    fn open_segment(&mut self, number: u64) -> io::Result<()> {
        self.0.with(|d| {
            d.segments.insert(number, Vec::new());
            d.active = number;
        });
        Ok(())
    }
    fn remove_segment(&mut self, number: u64) -> io::Result<()> {
        self.0.with(|d| d.segments.remove(&number));
        Ok(())
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn start(shared: &Shared, bounds: Bounds, lost: Arc<AtomicU64>) -> Committer {
    shared.with(|d| {
        d.segments.insert(1, Vec::new());
        d.active = 1;
    });
    let layout = Layout { active: 1, active_size: 0, closed: Vec::new() };
    let validate = Box::new(|line: &[u8]| line.ends_with(b"\n") && !line.starts_with(b"bad"));
    let on_loss = Box::new(move |_: CommitLoss| {
        lost.fetch_add(1, Ordering::AcqRel);
    });
    Committer::start(Box::new(MemStore(shared.clone())), layout, bounds, validate, on_loss).unwrap()
}

const BOUNDS: Bounds = Bounds { max_file_bytes: 1 << 20, max_retained_files: 4 };

fn line(i: usize, len: usize) -> Vec<u8> {
    let mut l = format!("{i:06}").into_bytes();
    l.resize(len - 1, b'x');
    l.push(b'\n');
    l
}

async fn wait_for(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::task::yield_now().await;
        std::thread::yield_now();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_only_after_the_sync_and_in_order() {
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost.clone());
    shared.with(|d| d.hold = true);
    let first = c.enqueue(line(0, 40));
    wait_for("the first batch to be written", || shared.with(|d| d.writes >= 1)).await;
    // These arrive while the first sync is held: they form the next batch.
    let rest: Vec<Ticket> = (1..20).map(|i| c.enqueue(line(i, 40))).collect();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (i, ticket) in std::iter::once(first).chain(rest).enumerate() {
        let order = order.clone();
        tasks.push(tokio::spawn(async move {
            let r = ticket.wait().await;
            order.lock().unwrap().push(i);
            r
        }));
    }
    tokio::task::yield_now().await;
    assert!(order.lock().unwrap().is_empty(), "nothing is answered while the sync is held");
    shared.with(|d| d.hold = false);
    for t in tasks {
        assert_eq!(t.await.unwrap(), Ok(()));
    }
    assert_eq!(c.stats().records(), 20);
    assert_eq!(c.stats().syncs(), 2, "group commit: the lone first record, then the 19 queued behind it");
    assert_eq!(c.stats().syncs(), c.stats().batches());
    let file = shared.with(|d| d.segments[&1].clone());
    let expected: Vec<u8> = (0..20).flat_map(|i| line(i, 40)).collect();
    assert_eq!(file, expected, "file order is arrival order");
    assert_eq!(lost.load(Ordering::Acquire), 0);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_keeps_segments_under_the_bound_and_prunes_oldest_first() {
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let bounds = Bounds { max_file_bytes: 1024, max_retained_files: 2 };
    let c = start(&shared, bounds, lost);
    for i in 0..10 {
        c.submit(line(i, 300)).await.unwrap();
    }
    let segments = shared.with(|d| d.segments.clone());
    // 3 lines of 300 bytes fit 1024; 10 lines need 4 segments, of which 2 are retained.
    assert_eq!(segments.keys().copied().collect::<Vec<_>>(), vec![3, 4]);
    assert!(segments.values().all(|s| s.len() <= 1024 && s.len() % 300 == 0));
    assert_eq!(segments[&4][..6], *b"000009", "the newest line is last in the newest segment");
    assert_eq!(c.stats().rotations(), 3);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sync_acknowledges_nothing_pending_and_refuses_everything_after() {
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost.clone());
    c.submit(line(0, 40)).await.unwrap();
    shared.with(|d| {
        d.fail_sync = Some(1);
        d.hold = true;
    });
    let mut tasks = Vec::new();
    for i in 1..9 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move { c.submit(line(i, 40)).await }));
    }
    wait_for("the failing batch", || shared.with(|d| d.writes >= 2)).await;
    shared.with(|d| d.hold = false);
    for t in tasks {
        assert_eq!(t.await.unwrap(), Err(CommitError::Unavailable));
    }
    assert_eq!(c.submit(line(10, 40)).await, Err(CommitError::Unavailable));
    assert_eq!(lost.load(Ordering::Acquire), 1, "the loss is reported once");
    assert_eq!(c.stats().records(), 1, "only the record before the failure was acknowledged");
    assert_eq!(c.close().await, Err(CommitError::Unavailable));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_line_is_a_write_failure() {
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost.clone());
    assert_eq!(c.submit(b"bad\n".to_vec()).await, Err(CommitError::Unavailable));
    assert_eq!(c.submit(line(1, 40)).await, Err(CommitError::Unavailable));
    assert_eq!(lost.load(Ordering::Acquire), 1);
    assert_eq!(shared.with(|d| d.writes), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_flushes_the_pending_batch_through_the_barrier() {
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost);
    shared.with(|d| d.hold = true);
    let first = c.enqueue(line(0, 40));
    wait_for("the first write", || shared.with(|d| d.writes >= 1)).await;
    // Arrives during the held sync: pending when close is asked.
    let second = c.enqueue(line(1, 40));
    let closer = {
        let c = c.clone();
        tokio::spawn(async move { c.close().await })
    };
    shared.with(|d| d.hold = false);
    assert_eq!(first.wait().await, Ok(()));
    assert_eq!(second.wait().await, Ok(()));
    assert_eq!(closer.await.unwrap(), Ok(()));
    assert_eq!(shared.with(|d| d.synced[&1]), 80, "both lines synced before close answered");
    assert_eq!(c.submit(line(2, 40)).await, Err(CommitError::Unavailable), "closed refuses");
}

/// A store whose sync panics: the owner is lost.
struct Panicking;

impl SegmentStore for Panicking {
    fn write_active(&mut self, _: &[u8]) -> io::Result<()> {
        Ok(())
    }
    fn sync_active(&mut self) -> io::Result<()> {
        panic!("injected panic in the committer")
    }
    fn open_segment(&mut self, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn remove_segment(&mut self, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_committer_reports_its_loss_and_acknowledges_nothing() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let report = seen.clone();
    let layout = Layout { active: 1, active_size: 0, closed: Vec::new() };
    let c = Committer::start(
        Box::new(Panicking),
        layout,
        BOUNDS,
        Box::new(|_: &[u8]| true),
        Box::new(move |loss| report.lock().unwrap().push(loss)),
    )
    .unwrap();
    assert_eq!(c.submit(line(0, 40)).await, Err(CommitError::Unavailable));
    assert_eq!(c.submit(line(1, 40)).await, Err(CommitError::Unavailable));
    assert_eq!(*seen.lock().unwrap(), [CommitLoss::OwnerLost]);
    assert_eq!(c.stats().records(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_larger_than_the_batch_bound_is_flushed_alone() {
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost);
    shared.with(|d| d.hold = true);
    let first = c.enqueue(line(0, 40));
    wait_for("the first write", || shared.with(|d| d.writes >= 1)).await;
    // Queued behind the held sync, in this order.
    let small = c.enqueue(line(1, 40));
    let big = c.enqueue(line(2, 70_000));
    let last = c.enqueue(line(3, 40));
    shared.with(|d| d.hold = false);
    for t in [first, small, big, last] {
        assert_eq!(t.wait().await, Ok(()));
    }
    // The pending small line is flushed before the big one joins; the big one forms a batch by itself.
    assert_eq!(shared.with(|d| d.write_sizes.clone()), [40, 40, 70_000, 40]);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_record_is_flushed_at_once() {
    // audit-events.md §2.6: with no sync in progress a record is flushed at once. Each record below is
    // alone (the previous one was acknowledged before it is submitted), so each batch is closed because
    // nothing more was queued, never by a bound; no timer exists that could close it instead.
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost.clone());
    for i in 0..3 {
        assert_eq!(c.submit(line(i, 40)).await, Ok(()));
        let s = c.stats();
        let n = i as u64 + 1;
        assert_eq!(
            (s.batches(), s.syncs(), s.records(), s.at_once(), s.cut_by_bound()),
            (n, n, n, n, 0),
            "record {i} is a batch of its own, flushed at once"
        );
    }
    assert_eq!(shared.with(|d| d.write_sizes.clone()), [40, 40, 40]);
    assert_eq!(shared.with(|d| d.synced[&1]), 120);
    assert_eq!(lost.load(Ordering::Acquire), 0);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_arriving_during_a_sync_form_one_next_batch() {
    // audit-events.md §2.6: records that arrive while a sync is in progress form the next batch, flushed
    // as soon as the sync returns: one write and one sync for all of them.
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost.clone());
    shared.with(|d| d.hold = true);
    let first = c.enqueue(line(0, 40));
    wait_for("the first batch to be written", || shared.with(|d| d.writes == 1)).await;
    let during: Vec<Ticket> = (1..=10).map(|i| c.enqueue(line(i, 40))).collect();
    assert_eq!(shared.with(|d| d.writes), 1, "nothing is written while the sync is held");
    shared.with(|d| d.hold = false);
    assert_eq!(first.wait().await, Ok(()));
    for ticket in during {
        assert_eq!(ticket.wait().await, Ok(()));
    }
    assert_eq!(shared.with(|d| d.write_sizes.clone()), [40, 400]);
    assert_eq!(shared.with(|d| d.syncs_seen), 2);
    let s = c.stats();
    assert_eq!(s.submitted(), 11);
    assert_eq!((s.batches(), s.syncs(), s.records(), s.at_once(), s.cut_by_bound()), (2, 2, 11, 2, 0));
    let expected: Vec<u8> = (0..=10).flat_map(|i| line(i, 40)).collect();
    assert_eq!(shared.with(|d| d.segments[&1].clone()), expected, "file order is arrival order");
    assert_eq!(lost.load(Ordering::Acquire), 0);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_next_batch_is_cut_at_64_records() {
    // audit-events.md §2.6: the batch forming during a sync still closes at 64 records; the rest forms
    // the batch after it, flushed at once when the first returns.
    let shared = Shared::default();
    let lost = Arc::new(AtomicU64::new(0));
    let c = start(&shared, BOUNDS, lost);
    shared.with(|d| d.hold = true);
    let first = c.enqueue(line(0, 40));
    wait_for("the first batch to be written", || shared.with(|d| d.writes == 1)).await;
    let during: Vec<Ticket> = (1..=100).map(|i| c.enqueue(line(i, 40))).collect();
    shared.with(|d| d.hold = false);
    assert_eq!(first.wait().await, Ok(()));
    for ticket in during {
        assert_eq!(ticket.wait().await, Ok(()));
    }
    assert_eq!(shared.with(|d| d.write_sizes.clone()), [40, 64 * 40, 36 * 40]);
    let s = c.stats();
    assert_eq!((s.batches(), s.syncs(), s.records(), s.at_once(), s.cut_by_bound()), (3, 3, 101, 2, 1));
    c.close().await.unwrap();
}
