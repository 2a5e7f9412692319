//! The exact text of a metrics file (audit-events.md §3.12): Prometheus text exposition format 0.0.4,
//! one `# HELP` and `# TYPE` line per family, families in a fixed order, series in snapshot order.

use std::fmt::Write;

use super::Snapshot;

/// A label value in the exposition format: backslash, double quote and line feed escaped.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The file's text for `snapshot`.
pub(crate) fn render(snapshot: &Snapshot) -> String {
    let mut out = String::new();
    family(
        &mut out,
        "ptc_gateway_ready",
        "gauge",
        "1 when the gateway is ready (GET /health/ready answers 200), else 0.",
    );
    let _ = writeln!(out, "ptc_gateway_ready {}", u8::from(snapshot.ready));
    family(&mut out, "ptc_gateway_admission_capacity", "gauge", "Slots of an admission pool.");
    for pool in &snapshot.pools {
        let _ = writeln!(out, "ptc_gateway_admission_capacity{{pool=\"{}\"}} {}", pool.name, pool.capacity);
    }
    family(&mut out, "ptc_gateway_admission_in_use", "gauge", "Slots of an admission pool in use.");
    for pool in &snapshot.pools {
        let _ = writeln!(out, "ptc_gateway_admission_in_use{{pool=\"{}\"}} {}", pool.name, pool.in_use);
    }
    family(
        &mut out,
        "ptc_gateway_provider_calls_waiting",
        "gauge",
        "Provider calls waiting for a provider-call slot.",
    );
    let _ = writeln!(out, "ptc_gateway_provider_calls_waiting {}", snapshot.provider_calls_waiting);
    family(
        &mut out,
        "ptc_gateway_events_total",
        "counter",
        "The event log's counter records summed since the gateway started, by kind, tool and provider.",
    );
    for ((kind, tool, provider), count) in &snapshot.counters {
        let tool = label(tool.as_deref().unwrap_or(""));
        let provider = label(provider.as_deref().unwrap_or(""));
        let _ = writeln!(
            out,
            "ptc_gateway_events_total{{kind=\"{}\",tool=\"{tool}\",provider=\"{provider}\"}} {count}",
            kind.as_str()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::CounterKind;
    use crate::metrics::PoolReading;

    /// MT1 (audit-events.md §3.12): the exact text of a snapshot with two pools and two counter series.
    #[test]
    fn mt1_the_exact_text() {
        let snapshot = Snapshot {
            ready: true,
            pools: vec![
                PoolReading { name: "mcp_requests", capacity: 16, in_use: 1 },
                PoolReading { name: "runs", capacity: 4, in_use: 0 },
            ],
            provider_calls_waiting: 2,
            counters: vec![
                ((CounterKind::Busy, None, None), 3),
                ((CounterKind::ModelTokens, Some("ask".into()), Some("llm".into())), 120),
            ],
        };
        let want = "\
# HELP ptc_gateway_ready 1 when the gateway is ready (GET /health/ready answers 200), else 0.
# TYPE ptc_gateway_ready gauge
ptc_gateway_ready 1
# HELP ptc_gateway_admission_capacity Slots of an admission pool.
# TYPE ptc_gateway_admission_capacity gauge
ptc_gateway_admission_capacity{pool=\"mcp_requests\"} 16
ptc_gateway_admission_capacity{pool=\"runs\"} 4
# HELP ptc_gateway_admission_in_use Slots of an admission pool in use.
# TYPE ptc_gateway_admission_in_use gauge
ptc_gateway_admission_in_use{pool=\"mcp_requests\"} 1
ptc_gateway_admission_in_use{pool=\"runs\"} 0
# HELP ptc_gateway_provider_calls_waiting Provider calls waiting for a provider-call slot.
# TYPE ptc_gateway_provider_calls_waiting gauge
ptc_gateway_provider_calls_waiting 2
# HELP ptc_gateway_events_total The event log's counter records summed since the gateway started, by kind, tool and provider.
# TYPE ptc_gateway_events_total counter
ptc_gateway_events_total{kind=\"busy\",tool=\"\",provider=\"\"} 3
ptc_gateway_events_total{kind=\"model_tokens\",tool=\"ask\",provider=\"llm\"} 120
";
        assert_eq!(render(&snapshot), want);
    }

    /// audit-events.md §3.12 vector MT2: label values are escaped as the exposition format requires.
    #[test]
    fn mt2_label_values_are_escaped() {
        assert_eq!(label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    }
}
