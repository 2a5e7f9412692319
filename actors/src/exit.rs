//! The exit status after a staged shutdown (lifecycle.md §2.2, §7.4, §7.5).
//!
//! Owns: the pure rule from the counted stage outcomes and the process-lifetime incidents to 0 or 70.
//! Does not own which stages count (the domain's stage table, [`crate::StageSpec::counts_for_exit`]),
//! which fence is an incident ([`crate::Domain::fence_counts_for_exit`]), the startup failure status 78
//! (the gateway's `main`) or how the incidents are observed.

use crate::stage::StageOutcome;

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
/// A fence whose cause does not count for the exit status (in the gateway, the loss of a transport owner)
/// is deliberately absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Incidents {
    /// Run admission was fenced (an execution owner stopped without acknowledging cleanup, cleanup
    /// failed, or the owner was lost).
    pub run_admission_fenced: bool,
    /// A fence with a cause that counts for the exit status happened, during serving or during the
    /// shutdown (in the gateway: a provider cleanup failure).
    pub exit_fence: bool,
    /// An abnormal stop (lifecycle.md §7.5).
    pub abnormal_stop: bool,
}

/// lifecycle.md §7.4: 0 iff every counted stage was clean (the caller passes the outcomes of the stages
/// that count) and no incident happened.
pub fn exit_status(counted: impl IntoIterator<Item = StageOutcome>, incidents: Incidents) -> ExitStatus {
    let stages_clean = counted.into_iter().all(StageOutcome::is_clean);
    let incident = incidents.run_admission_fenced || incidents.exit_fence || incidents.abnormal_stop;
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

    #[test]
    fn exit_status_table() {
        let none = Incidents::default();
        let clean = StageOutcome::Clean;
        let failed = StageOutcome::Unclean(Unclean::Failed);
        let table: Vec<(&str, Vec<StageOutcome>, Incidents, u8)> = vec![
            ("all clean", vec![clean; 7], none, 0),
            ("nothing counted", vec![], none, 0),
            ("one skipped", vec![clean, StageOutcome::Skipped, clean], none, 0),
            ("one unclean", vec![clean, failed, clean], none, 70),
            ("cancelled runs", vec![StageOutcome::Unclean(Unclean::RunsCancelled)], none, 70),
            ("run admission fenced", vec![clean], Incidents { run_admission_fenced: true, ..none }, 70),
            ("a fence that counts", vec![clean], Incidents { exit_fence: true, ..none }, 70),
            ("abnormal stop", vec![clean], Incidents { abnormal_stop: true, ..none }, 70),
        ];
        for (name, counted, incidents, code) in table {
            assert_eq!(exit_status(counted, incidents).code(), code, "{name}");
        }
    }
}
