//! The goals of issue 14 (G0–G7, with the targets issue 27 raised) and the aims of issue 27's scope 4
//! (T1 traces, T2 model calls, T3 the cold tool), each computed from the figures of the same run: the
//! measured value (a relative one per round, from that round's own baseline, as its median with min–max),
//! the target, and whether the median meets it. Owns only that comparison and its table; every figure is measured elsewhere in the
//! bench. A verdict is never hard-coded, and nothing here asserts: a goal that is not met is a row that
//! says so.

use std::time::Duration;

use super::rounds::{self, Rounds, Spread};
use super::{count, forward, ms, relay, us, Results};

/// What one comparison gave.
enum Verdict {
    Met,
    NotMet,
    /// The figure could not be measured in this run (the reason is in the measured column).
    NotMeasured,
    /// A figure shown for comparison, with no target of its own.
    Reference,
    /// A reference figure that could not be measured: no goal's verdict depends on it.
    ReferenceNotMeasured,
}

impl Verdict {
    fn word(&self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "not met",
            Verdict::NotMeasured => "not measured",
            Verdict::Reference => "reference",
            Verdict::ReferenceNotMeasured => "not measured (reference)",
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

/// `subject` ≥ `factor` × `base` in requests per second: the median of the per-round ratios.
fn rate_row(
    goal: &'static str,
    what: String,
    subject: &Rounds,
    factor: f64,
    base_name: &str,
    base: &Rounds,
) -> Row {
    let ratio = rounds::rate_ratio(subject, base);
    Row {
        goal,
        what,
        measured: format!("{} × ({:.0} / {:.0} req/s)", ratio.ratio(), subject.rps(), base.rps()),
        target: format!("≥ {factor} × {base_name}"),
        verdict: at_least(ratio.median, factor),
    }
}

/// A reference row: `subject` over `base` in requests per second, no target.
fn rate_reference(goal: &'static str, what: String, subject: &Rounds, base: &Rounds, note: &str) -> Row {
    let ratio = rounds::rate_ratio(subject, base);
    Row {
        goal,
        what,
        measured: format!("{} × ({:.0} / {:.0} req/s)", ratio.ratio(), subject.rps(), base.rps()),
        target: format!("— ({note})"),
        verdict: Verdict::Reference,
    }
}

/// A relay's added p50 over the direct side, as a reference row.
fn relay_row(name: &str, relay: &Result<Rounds, String>, f: &forward::Results, gateway: Spread) -> Row {
    match relay {
        Ok(relay) => {
            let added = rounds::added_at(relay, &f.direct, 0.5);
            Row {
                goal: "G5",
                what: format!("same upstream behind {name}: added p50 vs direct"),
                measured: format!("{} µs ({} − {} ms)", added.micros(), ms(relay.p50()), ms(f.direct.p50())),
                target: format!("— (what users run today; the gateway adds {:.1} µs)", gateway.median * 1e6),
                verdict: Verdict::Reference,
            }
        }
        Err(reason) => Row {
            goal: "G5",
            what: format!("same upstream behind {name}: added p50 vs direct"),
            measured: format!("not measured ({reason})"),
            target: "— (reference)".to_owned(),
            verdict: Verdict::ReferenceNotMeasured,
        },
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
    let ratio = rounds::p50_ratio(&h1.echo, &h1.list);
    rows.push(Row {
        goal: "G1",
        what: "Luau echo `tools/call` p50 / `tools/list` p50, c=1".to_owned(),
        measured: format!("{} × ({} / {} ms)", ratio.ratio(), ms(h1.echo.p50()), ms(h1.list.p50())),
        target: "≤ 1.5 ×".to_owned(),
        verdict: at_most(ratio.median, 1.5),
    });
    // G2: the trivial Luau call's rate at c=16 and c=64 against tools/list's.
    for c in [16, 64] {
        let h = r.http(c);
        rows.push(rate_row(
            "G2",
            format!("Luau echo `tools/call` req/s, c={c}"),
            &h.echo,
            0.6,
            "`tools/list`",
            &h.list,
        ));
    }
    // G3: an audited write at c=1 against the same gateway's echo plus two durable appends, per round.
    let w1 = r.writes(1);
    let g3 = Spread::of(
        w1.note
            .0
            .iter()
            .zip(&w1.echo.0)
            .zip(&w1.fsync.0)
            .map(|((n, e), f)| secs(n.p50()) / (secs(e.p50()) + 2.0 * secs(f.p50())).max(f64::MIN_POSITIVE))
            .collect(),
    );
    rows.push(Row {
        goal: "G3",
        what: "audited write p50 / (Luau echo p50 + 2 × write + fsync p50), c=1".to_owned(),
        measured: format!(
            "{} × ({} / ({} + 2 × {}) ms)",
            g3.ratio(),
            ms(w1.note.p50()),
            ms(w1.echo.p50()),
            ms(w1.fsync.p50())
        ),
        target: "≤ 1 ×".to_owned(),
        verdict: at_most(g3.median, 1.0),
    });
    // G4: audited writes at c=64 against the same gateway's unaudited echo; per-record fsync as reference.
    let w64 = r.writes(64);
    rows.push(rate_row(
        "G4",
        "audited write req/s, c=64, against the unaudited echo".to_owned(),
        &w64.note,
        0.9,
        "Luau echo (same gateway, same round)",
        &w64.echo,
    ));
    rows.push(rate_reference(
        "G4",
        "audited write req/s, c=64, against write + fsync per record by 64 threads".to_owned(),
        &w64.note,
        &w64.fsync,
        "the disk's flush rate of the moment; the write is CPU-bound, so G4 compares it with the echo",
    ));
    // G5: the forward tool's added p50 over the direct upstream; the relays beside it.
    let f = &r.forward;
    let added = rounds::added_at(&f.forward, &f.direct, 0.5);
    rows.push(Row {
        goal: "G5",
        what: "forward tool over stdio: added p50 vs direct".to_owned(),
        measured: format!("{} µs ({} − {} ms)", added.micros(), ms(f.forward.p50()), ms(f.direct.p50())),
        target: "≤ 60 µs".to_owned(),
        verdict: at_most(added.median, 60e-6),
    });
    // The least any HTTP front can add to the direct exchange: one HTTP request and answer on loopback,
    // which the forward makes besides the same pipe exchange the direct side makes.
    let bare = &r.http(1).baseline;
    rows.push(Row {
        goal: "G5",
        what: "one HTTP exchange on loopback: bare hyper p50, c=1 (main table)".to_owned(),
        measured: format!("{} µs", us(bare.p50())),
        target: "— (the floor under any HTTP front's added p50 on this machine)".to_owned(),
        verdict: Verdict::Reference,
    });
    rows.push(relay_row(&format!("`mcp-proxy` {}", relay::version()), &f.relay, f, added));
    rows.push(relay_row(
        &format!("`supergateway` {}", relay::supergateway_version()),
        &f.supergateway,
        f,
        added,
    ));
    // G6: the quickstart's idle footprint and what 10,000 calls leave behind.
    match &r.residue {
        Ok(res) => {
            let idle_mib = res.idle.rss_bytes as f64 / (1024.0 * 1024.0);
            rows.push(Row {
                goal: "G6",
                what: "quickstart idle RSS".to_owned(),
                measured: format!("{idle_mib:.2} MiB"),
                target: "≤ 12 MiB".to_owned(),
                verdict: at_most(idle_mib, 12.0),
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
            target: "≤ 12 MiB; ≤ 64 B/call; flat".to_owned(),
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
    // The aims of issue 27's scope 4: traces, model calls, the cold tool.
    rows.push(rate_row(
        "T1",
        "traced Luau echo req/s, c=16".to_owned(),
        &r.traces.echo.traced,
        0.85,
        "untraced",
        &r.traces.echo.untraced,
    ));
    let model = rounds::added_at(&r.models.chat.single, &r.models.write.single, 0.5);
    rows.push(Row {
        goal: "T2",
        what: "a model call's added p50 over an audited call, c=1".to_owned(),
        measured: format!(
            "{} µs ({} − {} ms)",
            model.micros(),
            ms(r.models.chat.single.p50()),
            ms(r.models.write.single.p50())
        ),
        target: "≤ 150 µs".to_owned(),
        verdict: at_most(model.median, 150e-6),
    });
    let cold = r.traces.cold.seconds_at(0.5);
    rows.push(Row {
        goal: "T3",
        what: format!("cold `hist.runs` p50 over {} trace files", count(super::traces::COLD_FILES)),
        measured: format!("{} ms", cold.show(1e3, 3)),
        target: "≤ 2 ms".to_owned(),
        verdict: at_most(cold.median, 2e-3),
    });
    rows
}

/// The section of `docs/benchmarks.md`: the table, then which goals this run met.
pub fn section(r: &Results) -> String {
    let rows = rows(r);
    let mut out = String::new();
    out.push_str("\n## Goals (issues 14 and 27)\n\n");
    out.push_str(
        "Each row compares a figure of this run with its target (the raised goals of issue 27). A relative\n",
    );
    out.push_str(
        "figure is computed per round from that round's subject and baseline; `measured` shows its median\n",
    );
    out.push_str(
        "with the min–max across rounds in parentheses, then the medians of the inputs, and the verdict\n",
    );
    out.push_str("uses the median. The verdict holds for this machine and load only. A goal with several rows is met\n");
    out.push_str(
        "when all of them are; a `reference` row has no target. T1–T3 are the aims of issue 27's scope 4\n",
    );
    out.push_str("(traces, model calls, the cold tool), measured in the sections below.\n\n");
    out.push_str("| goal | measure | measured, median (min–max) | target | verdict |\n");
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
    for goal in ["G0", "G1", "G2", "G3", "G4", "G5", "G6", "G7", "T1", "T2", "T3"] {
        let verdicts: Vec<&Verdict> = rows
            .iter()
            .filter(|r| {
                r.goal == goal && !matches!(r.verdict, Verdict::Reference | Verdict::ReferenceNotMeasured)
            })
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
