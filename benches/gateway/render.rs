//! `docs/benchmarks.md`: the introduction (the plan of the run, the machine, its load averages), the main
//! table, then each section's own text in order. Owns only the document's layout; every figure is
//! measured elsewhere, and every section's table is its own module's.

use super::rounds::{self, plan, Rounds};
use super::{
    count, forward, goals, models, ms, replay, residue, traces, us, Measured, Results, SANDBOX_SAMPLES,
    SANDBOX_WARM_UP,
};

/// `docs/benchmarks.md`.
pub fn render(r: &Results) -> String {
    let plan = plan();
    let mut out = String::new();
    out.push_str("# Benchmarks\n\n");
    out.push_str("Produced by `cargo bench --bench gateway` (benches/gateway.rs); every number below comes from one run,\n");
    out.push_str(
        "and every goal verdict is computed by the bench from that run's figures (nothing is hard-coded).\n\n",
    );
    out.push_str(&format!(
        "Every comparison runs as {} interleaved rounds (baseline, subject, baseline, subject, …), so that\n\
         load that comes and goes on the machine falls on every side alike. A row's req/s, p50 and p99 are\n\
         the medians over the rounds of each round's figure; a ratio is computed per round from that round's\n\
         baseline and subject, and shown as its median with its min–max across rounds in parentheses. Every\n\
         goal's verdict uses the medians. Each HTTP drive runs keep-alive connections back to back for\n\
         {:.1} s after a {:.1} s warm-up; each sequential (c=1) side makes {} calls per round after {}\n\
         unmeasured ones.\n\n",
        plan.rounds,
        plan.measure.as_secs_f64(),
        plan.warm_up.as_secs_f64(),
        count(plan.calls),
        count(plan.warm_calls)
    ));
    out.push_str("The full run is `cargo bench --bench gateway` (about 7 minutes on this 2-core machine). The plan comes\n");
    out.push_str(
        "from the environment: `PTC_BENCH_ROUNDS` (rounds per comparison, default 5), `PTC_BENCH_SECONDS`\n",
    );
    out.push_str("(the measured span of one drive, default 2), `PTC_BENCH_WARMUP` (its unmeasured warm-up in seconds,\n");
    out.push_str(
        "default 0.3) and `PTC_BENCH_CALLS` (sequential calls per round, default 500); a quick check is\n",
    );
    out.push_str(
        "`PTC_BENCH_ROUNDS=2 PTC_BENCH_SECONDS=0.5 PTC_BENCH_CALLS=100 cargo bench --bench gateway`.\n\n",
    );
    out.push_str(
        "`baseline` is a bare hyper 1 HTTP/1.1 server answering a fixed 18-byte body, run as its own process\n",
    );
    out.push_str("beside the gateway; `ratio` is the row's req/s divided by the baseline's req/s at the same concurrency\n");
    out.push_str(
        "in the same round. The PCC rows are the same Luau echo over the PCC tool gateway's gRPC stream\n",
    );
    out.push_str("(pcc.md; one stream per connection, calls sent one after another on each stream, `initialize` first,\n");
    out.push_str(
        "unmeasured): one stream at c=1, 16 streams at c=16; their last column is also given against the\n",
    );
    out.push_str("`/mcp` echo of the same round below the table. They have no goal yet.\n\n");
    out.push_str(
        "Write calls go through the private audit: each record is made durable (group commit: one write\n",
    );
    out.push_str(
        "and one fsync per batch) before the result is published. They are driven in rounds with the same\n",
    );
    out.push_str("gateway's unaudited Luau echo (G4's baseline) and with one `write` plus one `fsync` per 256-byte record\n");
    out.push_str("on a file in the same directory tree, by as many threads as connections; that last measures the disk's\n");
    out.push_str("flush latency at that moment, which other work writing to the same disk moves far more than it moves\n");
    out.push_str("HTTP rows, so it stays as a reference (G3 uses it, G4 shows it without a target).\n");
    out.push_str(&format!(
        "`sandbox ready (fresh state)` is measured in-process ({} runs after {} unmeasured ones; see\n\
         \"Sandbox ready\" below).\n\n",
        count(SANDBOX_SAMPLES),
        count(SANDBOX_WARM_UP)
    ));
    out.push_str(&format!("Machine: {}.\n\n", r.machine));
    out.push_str(&format!(
        "Load averages (1, 5, 15 minutes): {} when the run began, {} when it ended.\n\
         The machine may be shared with other work, which lowers absolute rates and widens p99s; the goals\n\
         compare figures of the same rounds, which such load skews less.\n\n",
        r.load_before, r.load_after
    ));
    out.push_str(
        "| workload | concurrency | req/s | p50 ms | p99 ms | ratio to baseline, median (min–max) |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    let row = |out: &mut String, name: &str, concurrency: usize, m: &Rounds, base: &Rounds| {
        out.push_str(&format!(
            "| {name} | {concurrency} | {:.0} | {} | {} | {} |\n",
            m.rps(),
            ms(m.p50()),
            ms(m.percentile(0.99)),
            rounds::rate_ratio(m, base).ratio()
        ));
    };
    for h in &r.http {
        row(&mut out, "baseline (bare hyper)", h.concurrency, &h.baseline, &h.baseline);
        row(&mut out, "tools/list", h.concurrency, &h.list, &h.baseline);
        row(&mut out, "tools/call echo (Luau)", h.concurrency, &h.echo, &h.baseline);
        match &h.pcc {
            Some(Ok(m)) => row(&mut out, "tools/call echo (Luau) over PCC", h.concurrency, m, &h.baseline),
            Some(Err(reason)) => out.push_str(&format!(
                "| tools/call echo (Luau) over PCC | {} | not measured ({reason}) | | | |\n",
                h.concurrency
            )),
            None => {}
        }
    }
    for w in &r.writes {
        row(&mut out, "baseline (write + fsync per record)", w.concurrency, &w.fsync, &w.fsync);
        row(&mut out, "tools/call echo (Luau), audit deployment", w.concurrency, &w.echo, &w.fsync);
        row(&mut out, "tools/call note (write, audited)", w.concurrency, &w.note, &w.fsync);
    }
    match &r.sandbox {
        Ok(m) => out.push_str(&format!(
            "| sandbox ready (fresh state) | 1 | — | {} | {} | — |\n",
            ms(m.p50()),
            ms(m.percentile(0.99))
        )),
        Err(reason) => {
            out.push_str(&format!("| sandbox ready (fresh state) | 1 | not measured ({reason}) | | | |\n"))
        }
    }
    out.push('\n');
    for h in &r.http {
        if let Some(Ok(m)) = &h.pcc {
            out.push_str(&format!(
                "Luau echo over PCC / over `/mcp`, c={}: req/s {}, p50 {}.\n",
                h.concurrency,
                rounds::rate_ratio(m, &h.echo).ratio(),
                rounds::p50_ratio(m, &h.echo).ratio()
            ));
        }
    }
    for w in &r.writes {
        out.push_str(&format!(
            "Audited write / unaudited echo of the same gateway, c={}: req/s {}.\n",
            w.concurrency,
            rounds::rate_ratio(&w.note, &w.echo).ratio()
        ));
    }
    out.push_str(&goals::section(r));
    out.push_str(&forward::section(&r.forward));
    out.push_str(&residue::section(&r.residue));
    out.push_str(&traces::section(&r.traces));
    out.push_str(&models::section(&r.models));
    out.push_str(&replay::section(&r.replay));
    out.push_str(&sandbox_section(&r.sandbox));
    out
}

fn sandbox_section(sandbox: &Result<Measured, String>) -> String {
    let mut out = String::new();
    out.push_str("\n## Sandbox ready (G7)\n\n");
    out.push_str("A `tools/call` also pays HTTP, admission, contracts and publication, so the sandbox's own start cannot\n");
    out.push_str("be seen from outside. The bench calls the library's doc-hidden `ptc_gateway::bench_hooks` in its own\n");
    out.push_str("process: it builds the `echo` application (its entry returns its input) through the startup path once,\n");
    out.push_str("then runs it through the runtime's entry point, each run in a fresh sandbox (execution.md §12.6), and\n");
    out.push_str("times each run from the call of the run function (activation) to the instant the runtime calls the\n");
    out.push_str(
        "entry function `run(input)`: sandbox creation, host globals, loading the entry component and\n",
    );
    out.push_str(&format!(
        "converting the input. {} samples after {} unmeasured runs, one thread, no server of the run left\n",
        count(SANDBOX_SAMPLES),
        count(SANDBOX_WARM_UP)
    ));
    out.push_str(
        "running. The main table shows no rate for this row: it times a part of a run, not a request.\n\n",
    );
    match sandbox {
        Ok(m) => out.push_str(&format!(
            "p50 {} µs, p99 {} µs, max {} µs.\n",
            us(m.p50()),
            us(m.percentile(0.99)),
            us(m.percentile(1.0))
        )),
        Err(reason) => out.push_str(&format!("Not measured: {reason}.\n")),
    }
    out
}
