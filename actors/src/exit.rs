//! The exit status after a staged shutdown (lifecycle.md §2.2, §7.4, §7.5).
//!
//! Owns: the pure rule from stage outcomes and process-lifetime incidents to 0 or 70. Does not own the
//! startup failure status 78 (the gateway's `main`) or how the incidents are observed.

use crate::stage::{StageId, StageOutcome};

/// The status a serve-mode process exits with after its staged shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: every counted stage was clean and nothing uncertain happened.
    Clean,
    /// 70: shutdown was not clean, or the domain stopped abnormally.
    Unclean,
}

impl ExitStatus {
    /// The numeric status (lifecycle.md §2.2).
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Clean => 0,
            ExitStatus::Unclean => 70,
        }
    }
}

/// What happened in this process that makes the exit unclean whatever the stages report (lifecycle.md §7.4).
/// A readiness fence caused only by the loss of a transport owner is deliberately absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Incidents {
    /// Run admission was fenced (an execution owner stopped without acknowledging cleanup, cleanup
    /// failed, or the owner was lost).
    pub run_admission_fenced: bool,
    /// A provider cleanup failure, during serving or during S5.
    pub provider_cleanup_failed: bool,
    /// An abnormal stop (lifecycle.md §7.5).
    pub abnormal_stop: bool,
}

/// lifecycle.md §7.4: 0 iff S1, S2, S3, S5, S6, S7 and S8 were clean (S4 never counts) and no incident
/// happened.
pub fn exit_status(stages: &[(StageId, StageOutcome)], incidents: Incidents) -> ExitStatus {
    let stages_clean = stages.iter().all(|(stage, outcome)| !stage.counts_for_exit() || outcome.is_clean());
    let incident =
        incidents.run_admission_fenced || incidents.provider_cleanup_failed || incidents.abnormal_stop;
    if stages_clean && !incident {
        ExitStatus::Clean
    } else {
        ExitStatus::Unclean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::Unclean;

    type Stages = Vec<(StageId, StageOutcome)>;

    fn all(outcome: StageOutcome) -> Vec<(StageId, StageOutcome)> {
        StageId::ALL.iter().map(|s| (*s, outcome)).collect()
    }

    fn with(stage: StageId, outcome: StageOutcome) -> Vec<(StageId, StageOutcome)> {
        StageId::ALL.iter().map(|s| (*s, if *s == stage { outcome } else { StageOutcome::Clean })).collect()
    }

    #[test]
    fn exit_status_table() {
        let none = Incidents::default();
        let failed = StageOutcome::Unclean(Unclean::Failed);
        let table: Vec<(&str, Stages, Incidents, u8)> = vec![
            ("all clean", all(StageOutcome::Clean), none, 0),
            ("S7 skipped", with(StageId::AuditFlush, StageOutcome::Skipped), none, 0),
            ("S4 unclean does not count", with(StageId::CheckpointEvents, failed), none, 0),
            ("S1 unclean", with(StageId::StopListeners, failed), none, 70),
            ("S2 unclean", with(StageId::Quiesce, failed), none, 70),
            (
                "S3 cancelled runs",
                with(StageId::DrainRuns, StageOutcome::Unclean(Unclean::RunsCancelled)),
                none,
                70,
            ),
            ("S5 unclean", with(StageId::ProviderCleanup, failed), none, 70),
            ("S6 unclean", with(StageId::AdmissionClean, failed), none, 70),
            ("S7 unclean", with(StageId::AuditFlush, failed), none, 70),
            ("S8 unclean", with(StageId::EventLogClose, failed), none, 70),
            (
                "run admission fenced",
                all(StageOutcome::Clean),
                Incidents { run_admission_fenced: true, ..none },
                70,
            ),
            (
                "provider cleanup failed",
                all(StageOutcome::Clean),
                Incidents { provider_cleanup_failed: true, ..none },
                70,
            ),
            ("abnormal stop", all(StageOutcome::Clean), Incidents { abnormal_stop: true, ..none }, 70),
        ];
        for (name, stages, incidents, code) in table {
            assert_eq!(exit_status(&stages, incidents).code(), code, "{name}");
        }
    }
}
