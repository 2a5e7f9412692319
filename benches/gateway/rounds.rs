//! Interleaved rounds (issue 27, scope 1): how long and how often each comparison is driven, and the
//! statistics over its rounds. Every comparison of the bench runs its sides in turn (baseline, subject,
//! baseline, subject, …) `rounds` times, so that load that comes and goes on the machine falls on every side
//! alike; a row reports the median over rounds of each per-round figure, and a ratio is computed per round
//! from that round's baseline and subject, then reported as its median with its min–max across rounds. Every
//! goal's verdict uses the medians.
//!
//! The plan comes from the environment, so that a quick run is possible (the defaults are the full run):
//! `PTC_BENCH_ROUNDS` (rounds per comparison, default 5), `PTC_BENCH_SECONDS` (the measured span of one
//! drive of keep-alive connections, default 2), `PTC_BENCH_WARMUP` (unmeasured seconds before each drive,
//! default 0.3), `PTC_BENCH_CALLS` (sequential calls measured per round in the c=1 sections, default 500,
//! after a tenth as many unmeasured ones). A value that does not parse, or is out of range, is refused at
//! start with the variable's name. Owns only the plan and the statistics.

use std::sync::OnceLock;
use std::time::Duration;

use super::Measured;

/// How long and how often every comparison is driven.
pub struct Plan {
    pub rounds: usize,
    pub measure: Duration,
    pub warm_up: Duration,
    /// Sequential calls measured per round, after `warm_calls` unmeasured ones.
    pub calls: usize,
    pub warm_calls: usize,
}

/// The plan of this run, read once from the environment.
pub fn plan() -> &'static Plan {
    static PLAN: OnceLock<Plan> = OnceLock::new();
    PLAN.get_or_init(|| {
        let rounds = number("PTC_BENCH_ROUNDS", 5.0, 1.0, 100.0) as usize;
        let measure = Duration::from_secs_f64(number("PTC_BENCH_SECONDS", 2.0, 0.05, 600.0));
        let warm_up = Duration::from_secs_f64(number("PTC_BENCH_WARMUP", 0.3, 0.0, 60.0));
        let calls = number("PTC_BENCH_CALLS", 500.0, 10.0, 1_000_000.0) as usize;
        Plan { rounds, measure, warm_up, calls, warm_calls: (calls / 10).max(1) }
    })
}

/// The variable `name` as a number in `min..=max`, or `default` when unset; anything else stops the bench
/// before it measures, naming the variable.
fn number(name: &str, default: f64, min: f64, max: f64) -> f64 {
    match std::env::var(name) {
        Err(_) => default,
        Ok(text) => match text.trim().parse::<f64>() {
            Ok(v) if (min..=max).contains(&v) => v,
            _ => {
                eprintln!("{name}={text:?}: expected a number from {min} to {max}");
                std::process::exit(2)
            }
        },
    }
}

/// The median and the extremes of one figure over the rounds.
#[derive(Clone, Copy)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(mut values: Vec<f64>) -> Spread {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n == 0 {
            return Spread { median: f64::NAN, min: f64::NAN, max: f64::NAN };
        }
        let median = if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 };
        Spread { median, min: values[0], max: values[n - 1] }
    }

    /// `0.612 (0.550–0.700)`, each with `decimals`, after scaling by `scale`.
    pub fn show(&self, scale: f64, decimals: usize) -> String {
        format!(
            "{:.d$} ({:.d$}–{:.d$})",
            self.median * scale,
            self.min * scale,
            self.max * scale,
            d = decimals
        )
    }

    /// A ratio: three decimals.
    pub fn ratio(&self) -> String {
        self.show(1.0, 3)
    }

    /// Seconds shown in microseconds, one decimal.
    pub fn micros(&self) -> String {
        self.show(1e6, 1)
    }
}

/// One side of a comparison, measured once per round.
pub struct Rounds(pub Vec<Measured>);

impl Rounds {
    pub fn new() -> Rounds {
        Rounds(Vec::new())
    }

    pub fn push(&mut self, m: Measured) {
        self.0.push(m);
    }

    /// The per-round rate, over the rounds.
    pub fn rps_spread(&self) -> Spread {
        Spread::of(self.0.iter().map(Measured::rps).collect())
    }

    /// The median of the per-round rates.
    pub fn rps(&self) -> f64 {
        self.rps_spread().median
    }

    /// The median over rounds of the round's percentile `p`.
    pub fn percentile(&self, p: f64) -> Duration {
        Duration::from_secs_f64(self.seconds_at(p).median.max(0.0))
    }

    pub fn p50(&self) -> Duration {
        self.percentile(0.5)
    }

    /// The round's percentile `p` in seconds, over the rounds.
    pub fn seconds_at(&self, p: f64) -> Spread {
        Spread::of(self.0.iter().map(|m| m.percentile(p).as_secs_f64()).collect())
    }
}

/// `subject` req/s over `base` req/s, per round.
pub fn rate_ratio(subject: &Rounds, base: &Rounds) -> Spread {
    per_round(subject, base, |s, b| s.rps() / b.rps().max(f64::MIN_POSITIVE))
}

/// `subject` p50 over `base` p50, per round.
pub fn p50_ratio(subject: &Rounds, base: &Rounds) -> Spread {
    per_round(subject, base, |s, b| s.p50().as_secs_f64() / b.p50().as_secs_f64().max(f64::MIN_POSITIVE))
}

/// `subject` minus `base` at percentile `p`, in seconds, per round.
pub fn added_at(subject: &Rounds, base: &Rounds, p: f64) -> Spread {
    per_round(subject, base, |s, b| s.percentile(p).as_secs_f64() - b.percentile(p).as_secs_f64())
}

/// `f(subject, base)` of each round both sides measured.
pub fn per_round(subject: &Rounds, base: &Rounds, f: impl Fn(&Measured, &Measured) -> f64) -> Spread {
    Spread::of(subject.0.iter().zip(&base.0).map(|(s, b)| f(s, b)).collect())
}
