//! The goals of issue 14 (G0–G7), each computed from the figures of the same run: the measured value, the
//! threshold it is compared with (for a relative goal, computed from that run's own baseline rows), and
//! whether it is met. Owns only that comparison and its table; every figure is measured elsewhere in the
//! bench. A verdict is never hard-coded, and nothing here asserts: a goal that is not met is a row that
//! says so.

use std::time::Duration;

use super::{count, ms, us, Measured, Results};

/// What one comparison gave.
enum Verdict {
    Met,
    NotMet,
    /// The figure could not be measured in this run (the reason is in the measured column).
    NotMeasured,
    /// A figure shown for comparison, with no target of its own.
    Reference,
}

impl Verdict {
    fn word(&self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "not met",
            Verdict::NotMeasured => "not measured",
            Verdict::Reference => "reference",
        }
    }
}

struct Row {
    goal: &'static str,
    what: String,
    measured: String,
    target: String,
    verdict: Verdict,
}

fn at_least(value: f64, threshold: f64) -> Verdict {
    if value >= threshold {
        Verdict::Met
    } else {
        Verdict::NotMet
    }
}

fn at_most(value: f64, threshold: f64) -> Verdict {
    if value <= threshold {
        Verdict::Met
    } else {
        Verdict::NotMet
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn from_secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

/// `value` ≥ `factor` × `base` in requests per second.
fn rate_row(
    goal: &'static str,
    what: String,
    value: &Measured,
    factor: f64,
    base_name: &str,
    base: &Measured,
) -> Row {
    let threshold = factor * base.rps();
    Row {
        goal,
        what,
        measured: format!("{:.0} req/s ({:.3} ×)", value.rps(), value.rps() / base.rps()),
        target: format!("≥ {factor} × {base_name} {:.0} = {threshold:.0} req/s", base.rps()),
        verdict: at_least(value.rps(), threshold),
    }
}

/// Every row, in goal order.
fn rows(r: &Results) -> Vec<Row> {
    let mut rows = Vec::new();
    // G0: tools/list at c=16 and c=64 against the bare hyper server.
    for c in [16, 64] {
        let h = r.http(c);
        rows.push(rate_row(
            "G0",
            format!("`tools/list` req/s, c={c}"),
            &h.list,
            0.6,
            "bare hyper",
            &h.baseline,
        ));
    }
    // G1: the trivial Luau call's p50 at c=1 against tools/list's.
    let h1 = r.http(1);
    let threshold = 2.0 * secs(h1.list.p50());
    rows.push(Row {
        goal: "G1",
        what: "Luau echo `tools/call` p50, c=1".to_owned(),
        measured: format!("{} ms", ms(h1.echo.p50())),
        target: format!("≤ 2 × `tools/list` p50 {} = {} ms", ms(h1.list.p50()), ms(from_secs(threshold))),
        verdict: at_most(secs(h1.echo.p50()), threshold),
    });
    // G2: the trivial Luau call's rate at c=16 and c=64 against tools/list's.
    for c in [16, 64] {
        let h = r.http(c);
        rows.push(rate_row(
            "G2",
            format!("Luau echo `tools/call` req/s, c={c}"),
            &h.echo,
            0.4,
            "`tools/list`",
            &h.list,
        ));
    }
    // G3: an audited write at c=1 against the echo plus two durable appends.
    let w1 = r.writes(1);
    let threshold = secs(h1.echo.p50()) + 2.0 * secs(w1.fsync.p50());
    rows.push(Row {
        goal: "G3",
        what: "audited write p50, c=1".to_owned(),
        measured: format!("{} ms", ms(w1.note.p50())),
        target: format!(
            "≤ Luau echo p50 {} + 2 × write + fsync p50 {} = {} ms",
            ms(h1.echo.p50()),
            ms(w1.fsync.p50()),
            ms(from_secs(threshold))
        ),
        verdict: at_most(secs(w1.note.p50()), threshold),
    });
    // G4: audited writes at c=64 against per-record fsync by 64 threads, and against the unaudited echo.
    let (w64, h64) = (r.writes(64), r.http(64));
    rows.push(rate_row(
        "G4",
        "audited write req/s, c=64, against write + fsync per record".to_owned(),
        &w64.note,
        1.5,
        "write + fsync by 64 threads",
        &w64.fsync,
    ));
    rows.push(rate_row(
        "G4",
        "audited write req/s, c=64, against the unaudited echo".to_owned(),
        &w64.note,
        0.7,
        "Luau echo",
        &h64.echo,
    ));
    // G5: the forward tool's added p50 over the direct upstream; the relay beside it.
    let f = &r.forward;
    let added = secs(f.forward.p50()) - secs(f.direct.p50());
    rows.push(Row {
        goal: "G5",
        what: "forward tool over stdio: added p50 vs direct".to_owned(),
        measured: format!("{:.1} µs ({} − {} ms)", added * 1e6, ms(f.forward.p50()), ms(f.direct.p50())),
        target: "≤ 100 µs".to_owned(),
        verdict: at_most(added, 100e-6),
    });
    rows.push(match &f.relay {
        Ok(relay) => Row {
            goal: "G5",
            what: format!(
                "same upstream behind `mcp-proxy` {}: added p50 vs direct",
                super::relay::version()
            ),
            measured: format!(
                "{:.1} µs ({} − {} ms)",
                (secs(relay.p50()) - secs(f.direct.p50())) * 1e6,
                ms(relay.p50()),
                ms(f.direct.p50())
            ),
            target: format!("— (what users run today; the gateway adds {:.1} µs)", added * 1e6),
            verdict: Verdict::Reference,
        },
        Err(reason) => Row {
            goal: "G5",
            what: "same upstream behind `mcp-proxy`: added p50 vs direct".to_owned(),
            measured: format!("not measured ({reason})"),
            target: "— (reference)".to_owned(),
            verdict: Verdict::NotMeasured,
        },
    });
    // G6: the quickstart's idle footprint and what 10,000 calls leave behind.
    match &r.residue {
        Ok(res) => {
            let idle_mib = res.idle.rss_bytes as f64 / (1024.0 * 1024.0);
            rows.push(Row {
                goal: "G6",
                what: "quickstart idle RSS".to_owned(),
                measured: format!("{idle_mib:.2} MiB"),
                target: "≤ 15 MiB".to_owned(),
                verdict: at_most(idle_mib, 15.0),
            });
            rows.push(Row {
                goal: "G6",
                what: format!("RSS residue per call over {} calls", count(res.calls)),
                measured: format!("{:+.1} B/call", res.per_call()),
                target: "≤ 64 B/call".to_owned(),
                verdict: at_most(res.per_call(), 64.0),
            });
            rows.push(Row {
                goal: "G6",
                what: format!("open descriptors, warm → after {} more calls", count(res.calls)),
                measured: format!("{} → {}", res.warm.fds, res.after.fds),
                target: format!("flat: ≤ {}", res.warm.fds),
                verdict: at_most(res.after.fds as f64, res.warm.fds as f64),
            });
            rows.push(Row {
                goal: "G6",
                what: format!("threads, warm → after {} more calls", count(res.calls)),
                measured: format!("{} → {}", res.warm.threads, res.after.threads),
                target: format!("flat: ≤ {}", res.warm.threads),
                verdict: at_most(res.after.threads as f64, res.warm.threads as f64),
            });
        }
        Err(reason) => rows.push(Row {
            goal: "G6",
            what: "quickstart idle RSS, residue, descriptors, threads".to_owned(),
            measured: format!("not measured ({reason})"),
            target: "≤ 15 MiB; ≤ 64 B/call; flat".to_owned(),
            verdict: Verdict::NotMeasured,
        }),
    }
    // G7: a fresh sandbox, activation to the entry's first instruction.
    match &r.sandbox {
        Ok(m) => {
            for (name, p, limit_us) in [("p50", 0.5, 50.0), ("p99", 0.99, 200.0)] {
                rows.push(Row {
                    goal: "G7",
                    what: format!("sandbox ready (fresh state) {name}"),
                    measured: format!("{} µs", us(m.percentile(p))),
                    target: format!("≤ {limit_us:.0} µs"),
                    verdict: at_most(secs(m.percentile(p)) * 1e6, limit_us),
                });
            }
        }
        Err(reason) => rows.push(Row {
            goal: "G7",
            what: "sandbox ready (fresh state)".to_owned(),
            measured: format!("not measured ({reason})"),
            target: "p50 ≤ 50 µs, p99 ≤ 200 µs".to_owned(),
            verdict: Verdict::NotMeasured,
        }),
    }
    rows
}

/// The section of `docs/benchmarks.md`: the table, then which goals this run met.
pub fn section(r: &Results) -> String {
    let rows = rows(r);
    let mut out = String::new();
    out.push_str("\n## Goals (issue 14)\n\n");
    out.push_str(
        "Each row compares a figure of this run with its target; a relative target is computed from this\n",
    );
    out.push_str("run's own rows (shown with its inputs), so the verdict holds for this machine and load only. A goal\n");
    out.push_str("with several rows is met when all of them are; a `reference` row has no target.\n\n");
    out.push_str("| goal | measure | measured | target (this run) | verdict |\n");
    out.push_str("| --- | --- | --- | --- | --- |\n");
    for row in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            row.goal,
            row.what,
            row.measured,
            row.target,
            row.verdict.word()
        ));
    }
    let (mut met, mut not_met, mut not_measured) = (Vec::new(), Vec::new(), Vec::new());
    for goal in ["G0", "G1", "G2", "G3", "G4", "G5", "G6", "G7"] {
        let verdicts: Vec<&Verdict> = rows
            .iter()
            .filter(|r| r.goal == goal && !matches!(r.verdict, Verdict::Reference))
            .map(|r| &r.verdict)
            .collect();
        if verdicts.iter().any(|v| matches!(v, Verdict::NotMet)) {
            not_met.push(goal);
        } else if verdicts.iter().any(|v| matches!(v, Verdict::NotMeasured)) || verdicts.is_empty() {
            not_measured.push(goal);
        } else {
            met.push(goal);
        }
    }
    let list = |goals: &[&str]| if goals.is_empty() { "none".to_owned() } else { goals.join(", ") };
    out.push_str(&format!(
        "\nIn this run: met {}; not met {}; not measured {}.\n",
        list(&met),
        list(&not_met),
        list(&not_measured)
    ));
    out
}
