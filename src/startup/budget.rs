//! Stage 6: the file-descriptor budget and the `listener_policy` report (lifecycle.md §10).
//!
//! The budget is computed from the documents alone, compared with the soft `RLIMIT_NOFILE`, and never
//! raises the limit itself. The report describes the listener geometry; it is returned to in-process
//! callers and logged once at info level, never served.

use serde_json::{Map, Value};

use crate::apps::Built;
use crate::explain::{Explain, Fact, Facts};
use crate::startup::documents::Documents;
use crate::startup::fault::{self, FaultPoint};
use crate::startup::{templates, StartupCode};

/// Connection slots above `max_inflight_requests` for idle keep-alive and health sockets (lifecycle.md §11).
pub const IDLE_HEADROOM: u64 = 8;
/// The PCC listener's fixed connection ceiling (pcc.md §3).
pub const PCC_CONNECTIONS: u64 = 64;
/// Runtime, standard streams, listener internals, audit and event files (lifecycle.md §10.1).
pub const BASE_RESERVE: u64 = 128;

/// The inputs of the formula of lifecycle.md §10.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetInputs {
    pub max_inflight_requests: u64,
    pub max_concurrent_runs: u64,
    pub max_active_provider_calls: u64,
    /// `I`: every member of the host document's `install`.
    pub installations: u64,
    /// `D`: provider declarations over all served tools, counted per tool.
    pub declarations: u64,
    pub artifacts: bool,
    pub pcc: bool,
}

/// The soft descriptor limit as `getrlimit` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftLimit {
    Finite(u64),
    Unlimited,
}

/// The `listener_policy` of lifecycle.md §10.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenerPolicy {
    pub handler_ceiling: u64,
    pub descriptor_reserve: u64,
    pub descriptor_budget: u64,
    pub soft_limit: SoftLimit,
    pub pcc: bool,
}

impl BudgetInputs {
    /// `handler_ceiling = max_inflight_requests + 8`.
    pub fn handler_ceiling(&self) -> u64 {
        self.max_inflight_requests + IDLE_HEADROOM
    }

    /// `descriptor_reserve = 128 + I × max_active_provider_calls + 4 × D + (artifacts ? 2 × runs : 0)`.
    pub fn descriptor_reserve(&self) -> u64 {
        let artifacts = if self.artifacts { 2 * self.max_concurrent_runs } else { 0 };
        BASE_RESERVE + self.installations * self.max_active_provider_calls + 4 * self.declarations + artifacts
    }

    /// `descriptor_budget = handler_ceiling + pcc_connections + listening_sockets + descriptor_reserve`.
    /// Within the schema bounds no term overflows u64 (lifecycle.md §10.1).
    pub fn descriptor_budget(&self) -> u64 {
        let pcc_connections = if self.pcc { PCC_CONNECTIONS } else { 0 };
        let listening_sockets = 1 + u64::from(self.pcc);
        self.handler_ceiling() + pcc_connections + listening_sockets + self.descriptor_reserve()
    }

    /// The check of lifecycle.md §10.1 against a soft limit (`None`: `getrlimit` failed).
    pub fn check(&self, soft_limit: Option<SoftLimit>) -> Result<ListenerPolicy, CapacityError> {
        let soft_limit = soft_limit.ok_or(CapacityError::LimitUnreadable)?;
        let budget = self.descriptor_budget();
        if let SoftLimit::Finite(limit) = soft_limit {
            if budget > limit {
                // lifecycle.md §1.5: the formula's terms, so an operator sees which setting to lower.
                let terms = format!(
                    "descriptor_budget {budget} (handler_ceiling {}, descriptor_reserve {}, pcc {})",
                    self.handler_ceiling(),
                    self.descriptor_reserve(),
                    self.pcc
                );
                return Err(CapacityError::Exceeded { terms, limit });
            }
        }
        Ok(ListenerPolicy {
            handler_ceiling: self.handler_ceiling(),
            descriptor_reserve: self.descriptor_reserve(),
            descriptor_budget: budget,
            soft_limit,
            pcc: self.pcc,
        })
    }
}

/// Why stage 6 refused (lifecycle.md §10.1).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CapacityError {
    /// `getrlimit` failed: `listener_capacity_unavailable`.
    #[error("the soft RLIMIT_NOFILE could not be read")]
    LimitUnreadable,
    /// The budget is above the soft limit: `listener_capacity_exceeded`. `terms` is the budget with the
    /// terms of its formula.
    #[error("the descriptor budget exceeds the soft RLIMIT_NOFILE")]
    Exceeded { terms: String, limit: u64 },
}

impl Explain for CapacityError {
    fn code(&self) -> StartupCode {
        match self {
            CapacityError::LimitUnreadable => StartupCode::ListenerCapacityUnavailable,
            CapacityError::Exceeded { .. } => StartupCode::ListenerCapacityExceeded,
        }
    }

    fn explain(&self, facts: &mut Facts) {
        facts.insert(Fact::Reason, self.to_string());
        if let CapacityError::Exceeded { terms, limit } = self {
            facts.insert(Fact::Needed, terms.clone());
            facts.insert(Fact::Available, format!("soft RLIMIT_NOFILE {limit}"));
        }
    }
}

/// Stage 6 for the documents and templates: the inputs of lifecycle.md §10.1 checked against the soft
/// limit read now (shared by serving and `ptc check`).
pub fn stage(docs: &Documents, built: &Built) -> Result<ListenerPolicy, CapacityError> {
    let admission = &docs.gateway.admission;
    let inputs = BudgetInputs {
        max_inflight_requests: u64::from(admission.max_inflight_requests),
        max_concurrent_runs: u64::from(admission.max_concurrent_runs),
        max_active_provider_calls: u64::from(admission.max_active_provider_calls),
        installations: docs.host.install.len() as u64,
        declarations: templates::declaration_count(built),
        artifacts: docs.gateway.artifacts.is_some(),
        pcc: docs.gateway.pcc.is_some(),
    };
    let soft_limit = if fault::injected(FaultPoint::Getrlimit) { None } else { read_soft_limit() };
    inputs.check(soft_limit)
}

/// Reads the soft `RLIMIT_NOFILE`; `None` when the call fails.
pub fn read_soft_limit() -> Option<SoftLimit> {
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    let (soft, _hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft == RLIM_INFINITY {
        Some(SoftLimit::Unlimited)
    } else {
        Some(SoftLimit::Finite(soft))
    }
}

impl ListenerPolicy {
    /// The report of lifecycle.md §10.2 as a JSON value (logged as deterministic JSON).
    pub fn to_value(self) -> Value {
        let mut transport = Map::new();
        transport.insert("descriptor_reserve".into(), self.descriptor_reserve.into());
        transport.insert("handler_ceiling".into(), self.handler_ceiling.into());
        transport.insert("idle_headroom".into(), IDLE_HEADROOM.into());
        transport.insert("num_acceptors".into(), 1u64.into());
        transport.insert("num_connections".into(), self.handler_ceiling.into());
        let soft = match self.soft_limit {
            SoftLimit::Finite(n) => Value::from(n),
            SoftLimit::Unlimited => Value::from("unlimited"),
        };
        transport.insert("soft_descriptor_limit".into(), soft);
        let mut report = Map::new();
        report.insert("descriptor_budget".into(), self.descriptor_budget.into());
        if self.pcc {
            let mut pcc = Map::new();
            pcc.insert("num_acceptors".into(), 1u64.into());
            pcc.insert("num_connections".into(), PCC_CONNECTIONS.into());
            report.insert("pcc_transport".into(), Value::Object(pcc));
        }
        report.insert("transport".into(), Value::Object(transport));
        Value::Object(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The baseline of config.md §10 (lifecycle.md §10.3).
    const BASELINE: BudgetInputs = BudgetInputs {
        max_inflight_requests: 16,
        max_concurrent_runs: 4,
        max_active_provider_calls: 4,
        installations: 1,
        declarations: 1,
        artifacts: true,
        pcc: true,
    };

    #[test]
    fn worked_example_and_variants() {
        assert_eq!(BASELINE.handler_ceiling(), 24);
        assert_eq!(BASELINE.descriptor_reserve(), 144);
        let cases = [
            (BASELINE, 234),
            (BudgetInputs { pcc: false, ..BASELINE }, 169),
            (BudgetInputs { installations: 2, ..BASELINE }, 238),
            (BudgetInputs { declarations: 2, ..BASELINE }, 238),
            (BudgetInputs { artifacts: false, ..BASELINE }, 226),
            (
                BudgetInputs {
                    max_inflight_requests: 128,
                    max_concurrent_runs: 16,
                    max_active_provider_calls: 8,
                    installations: 3,
                    declarations: 4,
                    artifacts: true,
                    pcc: false,
                },
                337,
            ),
        ];
        for (inputs, budget) in cases {
            assert_eq!(inputs.descriptor_budget(), budget, "{inputs:?}");
        }
    }

    #[test]
    fn soft_limit_check() {
        assert_eq!(
            BASELINE.check(Some(SoftLimit::Finite(233))).map_err(|e| e.code()),
            Err(StartupCode::ListenerCapacityExceeded)
        );
        assert!(BASELINE.check(Some(SoftLimit::Finite(234))).is_ok());
        assert!(BASELINE.check(Some(SoftLimit::Unlimited)).is_ok());
        assert_eq!(BASELINE.check(None).map_err(|e| e.code()), Err(StartupCode::ListenerCapacityUnavailable));
    }

    #[test]
    fn report_matches_the_worked_example() {
        let policy = BASELINE.check(Some(SoftLimit::Finite(1024))).map(|p| p.to_value());
        let expected = r#"{"descriptor_budget":234,"pcc_transport":{"num_acceptors":1,"num_connections":64},"transport":{"descriptor_reserve":144,"handler_ceiling":24,"idle_headroom":8,"num_acceptors":1,"num_connections":24,"soft_descriptor_limit":1024}}"#;
        let encoded = policy.map(|v| crate::json::to_deterministic_string(&v));
        assert_eq!(encoded.as_deref(), Ok(expected));
    }
}
