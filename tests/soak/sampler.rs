//! The soak's sampler: the gateway's resident memory, open descriptors, threads and child processes, read
//! from `/proc` at a fixed interval, then "nothing grew" and a plot of the samples as an SVG.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One reading of the gateway process.
#[derive(Clone, Debug)]
pub struct Sample {
    pub seconds: u64,
    pub rss_kib: u64,
    pub descriptors: u64,
    pub threads: u64,
    pub children: u64,
}

impl Sample {
    pub fn to_value(&self) -> Value {
        json!({"seconds": self.seconds, "rss_kib": self.rss_kib, "descriptors": self.descriptors,
               "threads": self.threads, "children": self.children})
    }
}

/// A `Name:  value` line of `/proc/<pid>/status`, as a number (the first word of the value).
fn status_field(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The processes whose parent is `pid` (field 4 of `/proc/<n>/stat`, after the parenthesised name).
fn children_of(pid: i32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<i32>().ok())
                == Some(pid)
        })
        .count() as u64
}

fn read(pid: i32, seconds: u64) -> Sample {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the gateway is running");
    let descriptors = std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count() as u64).unwrap_or(0);
    Sample {
        seconds,
        rss_kib: status_field(&status, "VmRSS:"),
        descriptors,
        threads: status_field(&status, "Threads:"),
        children: children_of(pid),
    }
}

/// Samples `pid` at start and every `every` until `deadline`, and once at the end.
pub fn run(pid: i32, deadline: Instant, every: Duration) -> Vec<Sample> {
    let started = Instant::now();
    let mut samples = vec![read(pid, 0)];
    let mut next = started + every;
    while next < deadline {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        samples.push(read(pid, started.elapsed().as_secs()));
        next += every;
    }
    std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
    samples.push(read(pid, started.elapsed().as_secs()));
    samples
}

/// "Nothing grew": from the second sample (the first is taken before any traffic and the warm pools fill
/// during the first interval) to the last, resident memory grew by at most 10 % or 4 MiB, descriptors and
/// threads by at most 8 (connections of clients still open at the moment of the reading), and the number
/// of child processes is unchanged.
pub fn assert_nothing_grew(samples: &[Sample]) {
    let (Some(first), Some(last)) = (samples.get(1), samples.last()) else { return };
    let rss_bound = (first.rss_kib + first.rss_kib / 10).max(first.rss_kib + 4096);
    assert!(last.rss_kib <= rss_bound, "RSS grew: {first:?} → {last:?}");
    assert!(last.descriptors <= first.descriptors + 8, "descriptors grew: {first:?} → {last:?}");
    assert!(last.threads <= first.threads + 8, "threads grew: {first:?} → {last:?}");
    assert_eq!(last.children, first.children, "child processes: {first:?} → {last:?}");
}

/// A chart's title and the reading it plots.
type Series = (&'static str, fn(&Sample) -> u64);

/// Four small line charts (RSS, descriptors, threads, children over time) in one SVG.
pub fn svg(samples: &[Sample]) -> String {
    let series: [Series; 4] = [
        ("RSS (KiB)", |s| s.rss_kib),
        ("descriptors", |s| s.descriptors),
        ("threads", |s| s.threads),
        ("child processes", |s| s.children),
    ];
    let (w, h) = (360.0_f64, 140.0_f64);
    let end = samples.last().map_or(1, |s| s.seconds.max(1)) as f64;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">"#,
        2.0 * w + 30.0,
        2.0 * h + 30.0
    );
    for (k, (name, pick)) in series.iter().enumerate() {
        let (x0, y0) = (10.0 + (k % 2) as f64 * (w + 10.0), 10.0 + (k / 2) as f64 * (h + 10.0));
        let max = samples.iter().map(pick).max().unwrap_or(1).max(1) as f64 * 1.1;
        let points: Vec<String> = samples
            .iter()
            .map(|s| {
                let x = x0 + 40.0 + (s.seconds as f64 / end) * (w - 50.0);
                let y = y0 + h - 20.0 - (pick(s) as f64 / max) * (h - 40.0);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        out.push_str(&format!(
            r##"<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#ccc"/><text x="{}" y="{}">{name}: {} → {} over {} s</text><polyline fill="none" stroke="#2a6" stroke-width="1.5" points="{}"/>"##,
            x0 + 6.0,
            y0 + 14.0,
            samples.first().map_or(0, pick),
            samples.last().map_or(0, pick),
            end,
            points.join(" ")
        ));
    }
    out.push_str("</svg>\n");
    out
}
