//! Shared fixtures of the in-process tests: a recording observer and a probe actor whose stop, panic
//! and `post_stop` can be driven and observed.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ptc_actors::{DomainObserver, LossKind, StageOutcome};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc;

// What the shared test domain names through `super::` (see its module docs).
pub use ptc_actors::{Bound, Builtin, Code, Domain, StageSpec};

/// The crate's own test domain, shared with the unit tests.
#[path = "../../src/test_domain.rs"]
pub mod test_domain;

pub use test_domain::{Cause, Step, Stop, Test};

pub type DomainContext = ptc_actors::DomainContext<Test>;
pub type DomainHandle = ptc_actors::DomainHandle<Test>;
pub type ChildPolicy = ptc_actors::ChildPolicy<Test>;
pub type ChildSpec<A> = ptc_actors::ChildSpec<A, Test>;
pub type ShutdownPlan = ptc_actors::ShutdownPlan<Test>;
pub type ShutdownReport = ptc_actors::ShutdownReport<Test>;
pub type StageContext = ptc_actors::StageContext<Test>;

/// What the observer heard, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Ready,
    NotReady(Cause),
    ChildLost(String, ChildPolicy, LossKind),
    Abnormal(Stop),
    Stage(Step, StageOutcome),
}

/// Records every event and forwards it to a channel the test waits on.
pub struct Recorder {
    events: Mutex<Vec<Event>>,
    tx: mpsc::UnboundedSender<Event>,
}

impl Recorder {
    fn push(&self, event: Event) {
        self.events.lock().unwrap().push(event.clone());
        let _ = self.tx.send(event);
    }

    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    /// Only the readiness-related events (ready, not ready, child lost, abnormal).
    pub fn domain_events(&self) -> Vec<Event> {
        self.events().into_iter().filter(|e| !matches!(e, Event::Stage(..))).collect()
    }
}

impl DomainObserver<Test> for Recorder {
    fn ready(&self) {
        self.push(Event::Ready);
    }
    fn not_ready(&self, cause: Cause) {
        self.push(Event::NotReady(cause));
    }
    fn child_lost(&self, child: &str, policy: ChildPolicy, loss: LossKind) {
        self.push(Event::ChildLost(child.to_string(), policy, loss));
    }
    fn abnormal_stop(&self, cause: Stop) {
        self.push(Event::Abnormal(cause));
    }
    fn shutdown_stage(&self, stage: Step, outcome: StageOutcome) {
        self.push(Event::Stage(stage, outcome));
    }
}

/// A context whose observer is a recorder, and the receiving end of the recorder's channel.
pub fn context() -> (DomainContext, Arc<Recorder>, mpsc::UnboundedReceiver<Event>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let recorder = Arc::new(Recorder { events: Mutex::new(Vec::new()), tx });
    (DomainContext::new(recorder.clone()), recorder, rx)
}

/// Waits (with a deadline, never a bare sleep) until an event matching `want` arrives.
pub async fn wait_for(rx: &mut mpsc::UnboundedReceiver<Event>, want: impl Fn(&Event) -> bool) -> Event {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(event)) if want(&event) => return event,
            Ok(Some(_)) => continue,
            Ok(None) => panic!("observer channel closed"),
            Err(_) => panic!("no matching event before the deadline"),
        }
    }
}

/// A log shared by probes, to see the order of their `post_stop`s.
pub type StopLog = Arc<Mutex<Vec<String>>>;

/// How a probe behaves.
#[derive(Clone)]
pub struct ProbeArgs {
    pub name: String,
    pub stops: StopLog,
    pub fail_start: bool,
    pub stop_in_post_start: bool,
}

impl ProbeArgs {
    pub fn new(name: &str, stops: &StopLog) -> Self {
        ProbeArgs {
            name: name.to_string(),
            stops: stops.clone(),
            fail_start: false,
            stop_in_post_start: false,
        }
    }
}

pub enum ProbeMsg {
    Panic,
    Fail,
}

/// A child actor for fault injection.
pub struct Probe;

impl Actor for Probe {
    type Msg = ProbeMsg;
    type State = ProbeArgs;
    type Arguments = ProbeArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<ProbeMsg>,
        args: ProbeArgs,
    ) -> Result<ProbeArgs, ActorProcessingErr> {
        if args.fail_start {
            return Err("refused to start".into());
        }
        Ok(args)
    }

    async fn post_start(
        &self,
        myself: ActorRef<ProbeMsg>,
        state: &mut ProbeArgs,
    ) -> Result<(), ActorProcessingErr> {
        if state.stop_in_post_start {
            myself.stop(None);
        }
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<ProbeMsg>,
        message: ProbeMsg,
        _state: &mut ProbeArgs,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ProbeMsg::Panic => panic!("probe told to panic"),
            ProbeMsg::Fail => Err("probe told to fail".into()),
        }
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<ProbeMsg>,
        state: &mut ProbeArgs,
    ) -> Result<(), ActorProcessingErr> {
        state.stops.lock().unwrap().push(state.name.clone());
        Ok(())
    }
}
