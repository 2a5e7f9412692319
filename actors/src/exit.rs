//! The exit status after a staged shutdown.
//!
//! Owns: the pure rule from the counted stage outcomes and the process-lifetime incidents to clean or
//! unclean, and the numeric status of each (0, or the domain's [`crate::Domain::UNCLEAN_EXIT`]). Does not
//! own which stages count (the domain's stage table, [`crate::StageSpec::counts_for_exit`]), which fence
//! is an incident ([`crate::Domain::fence_counts_for_exit`]), the status of a failed startup (the
//! embedding program's) or how the incidents are observed.

use crate::domain::Domain;
use crate::stage::StageOutcome;

/// The status a process exits with after its staged shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// Every counted stage was clean and nothing uncertain happened.
    Clean,
    /// The shutdown was not clean, or the domain stopped abnormally.
    Unclean,
}

impl ExitStatus {
    /// The numeric status in domain `D`: 0 for a clean exit, [`Domain::UNCLEAN_EXIT`] otherwise.
    pub fn code<D: Domain>(self) -> u8 {
        match self {
            ExitStatus::Clean => 0,
            ExitStatus::Unclean => D::UNCLEAN_EXIT,
        }
    }
}

/// What happened in this process that makes the exit unclean whatever the stages report. A fence whose
/// cause does not count for the exit status ([`Domain::fence_counts_for_exit`]) is deliberately absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Incidents {
    /// The drained admission (the plan's admission owner) was fenced: work it admitted may have been
    /// lost before it settled.
    pub admission_fenced: bool,
    /// A fence with a cause that counts for the exit status happened, while serving or during the
    /// shutdown.
    pub exit_fence: bool,
    /// An abnormal stop.
    pub abnormal_stop: bool,
}

/// Clean iff every counted stage was clean (the caller passes the outcomes of the stages that count) and
/// no incident happened.
pub fn exit_status(counted: impl IntoIterator<Item = StageOutcome>, incidents: Incidents) -> ExitStatus {
    let stages_clean = counted.into_iter().all(StageOutcome::is_clean);
    let incident = incidents.admission_fenced || incidents.exit_fence || incidents.abnormal_stop;
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
    use crate::test_domain::Test;

    #[test]
    fn exit_status_table() {
        use ExitStatus::{Clean, Unclean as Bad};
        let none = Incidents::default();
        let clean = StageOutcome::Clean;
        let failed = StageOutcome::Unclean(Unclean::Failed);
        let table: Vec<(&str, Vec<StageOutcome>, Incidents, ExitStatus)> = vec![
            ("all clean", vec![clean; 7], none, Clean),
            ("nothing counted", vec![], none, Clean),
            ("one skipped", vec![clean, StageOutcome::Skipped, clean], none, Clean),
            ("one unclean", vec![clean, failed, clean], none, Bad),
            ("cancelled leases", vec![StageOutcome::Unclean(Unclean::LeasesCancelled)], none, Bad),
            ("admission fenced", vec![clean], Incidents { admission_fenced: true, ..none }, Bad),
            ("a fence that counts", vec![clean], Incidents { exit_fence: true, ..none }, Bad),
            ("abnormal stop", vec![clean], Incidents { abnormal_stop: true, ..none }, Bad),
        ];
        for (name, counted, incidents, status) in table {
            assert_eq!(exit_status(counted, incidents), status, "{name}");
        }
    }

    #[test]
    fn the_numeric_status_is_the_domains() {
        assert_eq!(ExitStatus::Clean.code::<Test>(), 0);
        assert_eq!(ExitStatus::Unclean.code::<Test>(), 1);
    }
}
