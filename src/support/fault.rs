//! Fault injection for the test vectors marked *F* in config.md §11 (rows 94, 97, 106, 116, 119), and for the
//! defect answer of the MCP front (http-mcp.md §5), and for timing windows that the tests must be able to
//! hold open (the publication write, the shutdown's stop of the listeners, the audit's write behind the
//! grouping hold) or close (the early-activated commit's write).
//!
//! Compiled only with the `fault-injection` cargo feature, which the test command enables and release
//! builds never do: without it, [`injected`] is a constant `false` and the optimiser removes every check.
//! With it, `PTC_FAULT=<point>` makes the named point fail once.
//!
//! Owns the closed set of points and the check; the layers that hold a point decide what failing means
//! there. A leaf module: it imports nothing of this crate, so any layer can hold a point.

/// A place where a startup stage can be made to fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPoint {
    /// Stage 6: `getrlimit` fails (row 94).
    Getrlimit,
    /// Stage 8: run admission fails to start (row 97).
    RunAdmission,
    /// Stage 9c: provider-call admission fails to start (row 106).
    ProviderAdmission,
    /// Stage 5: a panic inside a stage (row 119).
    PanicInStage,
    /// Stage 9d: the resolved executable cannot be read for its digest (row 116). Mode 0111 stages this
    /// for an unprivileged user only; root reads every file, and CI runs as root.
    ExecutableUnreadable,
    /// While serving: a defect in the MCP front after the envelope check validated the id
    /// (http-mcp.md §7.2, §5, the 500 answer of a gateway failure before the commit).
    FrontDefect,
    /// While serving: the final message of a `tools/call` cannot be written (audit-events.md §6.2 vector
    /// EV15, the `publication_failed` outcome and counter).
    PublicationWrite,
    /// At shutdown: the stop listeners stage (S1) waits [`SLOW_LISTENER_STOP`] before it stops the accept
    /// loops, which widens the window between readiness turning `draining` and the PCC front seeing the drain
    /// (pcc.md §15 step 3 must hold in it).
    SlowListenerStop,
    /// While serving: an activated run panics outside the Luau call, after it settled and before its
    /// classification (execution.md §6.2 "A run lost before it settles").
    PanicInRun,
    /// At shutdown: the orchestration panics before the stages run (lifecycle.md §7.5).
    PanicInOrchestration,
    /// At shutdown: a PCC stream without a call in flight does not end at the drain (pcc.md §15 step 2) but
    /// stays open until the cutoff cuts it, so that the stop listeners stage's rule "every PCC stream ended
    /// by pcc.md's cutoff" (lifecycle.md §7.3) can be seen failing.
    StreamOutlivesDrain,
    /// While serving: creating a run's trace file fails with `EMFILE` (traces.md §4.2, vector T10).
    TraceDescriptors,
    /// While serving: the audit committer waits [`SLOW_AUDIT_WRITE`] before each batch's write, so a
    /// write tool's record becomes durable only after the grouping hold of execution.md §4.5 (vector SG6).
    SlowAuditWrite,
    /// While serving: the commit of a provider-free run activated with it (one that did not settle in its
    /// first slice) cannot be written, as when the client is gone (execution.md §4.5, vector SG7).
    CommitWrite,
    /// Stage 12: the listener owners have started, and readiness turns true only [`SLOW_READINESS`]
    /// later, which holds open the window in which a client connected after the bind must wait rather
    /// than be refused (lifecycle.md §6.5, vector RD1).
    SlowReadiness,
}

/// How long [`FaultPoint::SlowListenerStop`] holds the stop listeners stage (S1).
pub const SLOW_LISTENER_STOP: std::time::Duration = std::time::Duration::from_millis(1_500);

/// How long [`FaultPoint::SlowReadiness`] holds stage 12 before readiness turns true.
pub const SLOW_READINESS: std::time::Duration = std::time::Duration::from_millis(1_000);

/// How long [`FaultPoint::SlowAuditWrite`] holds each audit batch before its write: well past the grouping
/// hold (1,000 ms), so the commit's lone write and the record's are seen apart.
pub const SLOW_AUDIT_WRITE: std::time::Duration = std::time::Duration::from_millis(2_500);

impl FaultPoint {
    fn as_str(self) -> &'static str {
        match self {
            FaultPoint::Getrlimit => "getrlimit",
            FaultPoint::RunAdmission => "run_admission",
            FaultPoint::ProviderAdmission => "provider_admission",
            FaultPoint::PanicInStage => "panic_in_stage",
            FaultPoint::ExecutableUnreadable => "executable_unreadable",
            FaultPoint::FrontDefect => "mcp_front_defect",
            FaultPoint::PublicationWrite => "publication_write",
            FaultPoint::SlowListenerStop => "slow_listener_stop",
            FaultPoint::PanicInRun => "panic_in_run",
            FaultPoint::PanicInOrchestration => "panic_in_orchestration",
            FaultPoint::StreamOutlivesDrain => "stream_outlives_drain",
            FaultPoint::TraceDescriptors => "trace_descriptors",
            FaultPoint::SlowAuditWrite => "slow_audit_write",
            FaultPoint::CommitWrite => "commit_write",
            FaultPoint::SlowReadiness => "slow_readiness",
        }
    }
}

/// The value of `PTC_FAULT` after `kind:`, for the faults that name their target: `panic_task:<task>`
/// (a transport task panics once serving), `panic_owner:<path>` (the tree node at `<path>` panics once
/// serving; `domain` is the domain supervisor itself).
#[cfg(feature = "fault-injection")]
pub fn target(kind: &str) -> Option<String> {
    let value = std::env::var("PTC_FAULT").ok()?;
    value.strip_prefix(kind)?.strip_prefix(':').map(str::to_owned)
}

/// Without the feature nothing is ever injected.
#[cfg(not(feature = "fault-injection"))]
pub fn target(kind: &str) -> Option<String> {
    let _ = kind;
    None
}

#[cfg(feature = "fault-injection")]
static SERVING: std::sync::OnceLock<tokio::sync::watch::Sender<bool>> = std::sync::OnceLock::new();

#[cfg(feature = "fault-injection")]
fn serving() -> &'static tokio::sync::watch::Sender<bool> {
    SERVING.get_or_init(|| tokio::sync::watch::channel(false).0)
}

/// Stage 12 passed: the faults that wait for serving fire now.
pub fn mark_serving() {
    #[cfg(feature = "fault-injection")]
    serving().send_replace(true);
}

/// Runs `work`; when a test asked `task` to panic (`PTC_FAULT=panic_task:<task>`), the task panics as
/// soon as the gateway serves instead. Without the feature this is `work` itself.
pub async fn with_task_panic<F: std::future::Future>(task: &'static str, work: F) -> F::Output {
    #[cfg(feature = "fault-injection")]
    if target("panic_task").as_deref() == Some(task) {
        let mut serving = serving().subscribe();
        tokio::select! {
            done = work => return done,
            _ = serving.wait_for(|s| *s) => panic!("injected fault: a panic in task {task}"),
        }
    }
    let _ = task;
    work.await
}

/// True when the test asked `point` to fail.
#[cfg(feature = "fault-injection")]
pub fn injected(point: FaultPoint) -> bool {
    std::env::var("PTC_FAULT").is_ok_and(|v| v == point.as_str())
}

/// Without the feature nothing is ever injected.
#[cfg(not(feature = "fault-injection"))]
pub fn injected(point: FaultPoint) -> bool {
    let _ = point.as_str();
    false
}
