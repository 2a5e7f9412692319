//! The host calls of a replayed run answered from its trace (replay.md §3, traces.md §6.3): the replay's
//! [`ToolPort`] and [`ModelPort`], the same seams the gateway's provider borrow implements
//! (`exec::borrow`), so the runtime runs the script exactly as it serves it and the serving path gains
//! nothing (no branch, no allocation, no extra dynamic call).
//!
//! Owns the matching of each call with the next recorded one by kind, alias (or model declaration) and
//! digest, the first divergence, and what happens after it: the run is cancelled (its next boundary ends
//! it), so nothing after a divergence is answered from a record that belongs to another call. Does not own
//! reading the trace (`trace`) or the verdict (`run`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::trace::{Answer, CallKey, CallKind, HostCall, Listings};
use crate::apps::runtime::{ApiTool, CancelToken, ModelPort, ModelReply, ToolAnswer, ToolPort, ToolReply};
use crate::apps::selection::Selections;
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::json::value_digest;
use crate::traces::hist::HistTool;

/// The first host call where the replayed run and the trace part (replay.md §3): its 1-based position
/// among the run's host calls, the call the trace has there and the one the replayed run made (`None`
/// when the trace has no more calls, or the replayed run ended before making it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Divergence {
    pub position: usize,
    pub recorded: Option<CallKey>,
    pub replayed: Option<CallKey>,
}

/// The answers of one replayed run.
pub(crate) struct Script {
    /// The replayed tool's grants and model declarations, as CONFIG now has them.
    selections: Selections,
    calls: Vec<HostCall>,
    /// The granted tools' facts the recorded run was shown (traces.md §5.8).
    listings: Listings,
    state: Mutex<State>,
    cancel: CancelToken,
    /// The run asked for the listing facts of an upstream tool (`handle:api()`, the agent's signatures)
    /// that the trace does not hold (replay.md §3).
    listing: AtomicBool,
}

#[derive(Default)]
struct State {
    next: usize,
    divergence: Option<Divergence>,
}

impl Script {
    pub(crate) fn new(
        selections: Selections,
        calls: Vec<HostCall>,
        listings: Listings,
        cancel: CancelToken,
    ) -> Arc<Script> {
        Arc::new(Script {
            selections,
            calls,
            listings,
            state: Mutex::default(),
            cancel,
            listing: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next recorded answer when `key` matches the next recorded call; otherwise the divergence is
    /// kept (the first one only) and the run is cancelled.
    fn answer(&self, key: CallKey) -> Option<Answer> {
        let mut state = self.lock();
        if state.divergence.is_some() {
            return None;
        }
        let position = state.next + 1;
        match self.calls.get(state.next) {
            Some(call) if call.key == key => {
                state.next += 1;
                Some(call.answer.clone())
            }
            recorded => {
                let recorded = recorded.map(|c| c.key.clone());
                state.divergence = Some(Divergence { position, recorded, replayed: Some(key) });
                drop(state);
                self.cancel.cancel();
                None
            }
        }
    }

    /// After the run: the divergence, or, when the run made fewer calls than the trace has, the first
    /// call it did not make.
    pub(crate) fn divergence(&self) -> Option<Divergence> {
        let state = self.lock();
        if let Some(divergence) = &state.divergence {
            return Some(divergence.clone());
        }
        self.calls.get(state.next).map(|call| Divergence {
            position: state.next + 1,
            recorded: Some(call.key.clone()),
            replayed: None,
        })
    }

    /// Whether the run asked for listing facts a replay does not have.
    pub(crate) fn needed_listing(&self) -> bool {
        self.listing.load(Ordering::Relaxed)
    }
}

impl ToolPort for Script {
    fn call(&self, _mission: &str, alias: &str, arguments: Option<Value>) -> ToolAnswer {
        let key = CallKey {
            kind: CallKind::Tool,
            alias: alias.to_owned(),
            digest: arguments.as_ref().map(value_digest),
        };
        let reply = match self.answer(key) {
            Some(Answer::Tool(reply)) => reply,
            // Diverged: the run is cancelled, so its boundary ends it before the script sees this.
            _ => ToolReply::failed(FailureClass::McpCancelled, Dispatch::False),
        };
        ToolAnswer { reply, request_id: None }
    }

    /// The grant set as the gateway's port gives it (CONFIG's aliases and effects), with the facts a
    /// replay knows: a cold tool's `hist` tools have fixed facts; an upstream tool's description and
    /// schemas come from acquisition, which a replay does not make, so they are the ones the trace's
    /// `listing` record of the mission holds for the alias (traces.md §5.8). An alias it does not hold
    /// (a trace written before the record existed, an alias granted since) ends the run as not
    /// replayable (replay.md §3).
    fn granted_tools(&self, mission: &str) -> Vec<ApiTool> {
        let selections = &self.selections;
        let Some(grants) = selections.missions.get(mission) else { return Vec::new() };
        let listed = self.listings.get(mission);
        let mut tools = Vec::new();
        for (alias, grant) in grants {
            let recorded = listed.and_then(|listed| listed.get(alias));
            let hist = selections
                .snapshots
                .contains_key(&grant.declaration)
                .then(|| HistTool::from_name(&grant.upstream_tool))
                .flatten();
            match (hist, recorded) {
                (Some(tool), _) => tools.push(ApiTool {
                    alias: alias.clone(),
                    description: Some(tool.description().to_owned()),
                    input_schema: Arc::new(tool.input_schema()),
                    output_schema: None,
                    effect: grant.effect,
                }),
                (None, Some(facts)) => tools.push(ApiTool {
                    alias: alias.clone(),
                    description: facts.description.clone(),
                    input_schema: facts.input_schema.clone(),
                    output_schema: facts.output_schema.clone(),
                    effect: grant.effect,
                }),
                (None, None) => {
                    self.listing.store(true, Ordering::Relaxed);
                    self.cancel.cancel();
                    return Vec::new();
                }
            }
        }
        tools
    }
}

impl ModelPort for Script {
    fn declared(&self, name: &str) -> bool {
        self.selections.models.iter().any(|m| m == name)
    }

    fn chat(&self, name: &str, request: Option<Value>) -> ModelReply {
        let key = CallKey {
            kind: CallKind::Model,
            alias: name.to_owned(),
            digest: request.as_ref().map(value_digest),
        };
        match self.answer(key) {
            Some(Answer::Model(reply)) => reply,
            _ => ModelReply::Failed { class: ModelFailure::Unavailable, dispatch: Dispatch::False },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn echo(args: Value, value: i64) -> HostCall {
        let key =
            CallKey { kind: CallKind::Tool, alias: "fx.echo".to_owned(), digest: Some(value_digest(&args)) };
        let reply = ToolReply::Ok { value: Some(json!(value)), content: json!([]) };
        HostCall { key, answer: Answer::Tool(reply) }
    }

    fn script(calls: Vec<HostCall>) -> (Arc<Script>, CancelToken) {
        let cancel = CancelToken::new();
        (Script::new(Selections::default(), calls, Listings::new(), cancel.clone()), cancel)
    }

    fn value(answer: &ToolAnswer) -> Option<Value> {
        match &answer.reply {
            ToolReply::Ok { value, .. } => value.clone(),
            ToolReply::Failed { .. } => None,
        }
    }

    /// replay.md §3: calls that match are answered in order with the recorded replies.
    #[test]
    fn matching_calls_are_answered_in_order() {
        let (script, cancel) = script(vec![echo(json!({"k": 1}), 1), echo(json!({"k": 2}), 2)]);
        assert_eq!(value(&script.call("m", "fx.echo", Some(json!({"k": 1})))), Some(json!(1)));
        assert_eq!(value(&script.call("m", "fx.echo", Some(json!({"k": 2})))), Some(json!(2)));
        assert_eq!(script.divergence(), None);
        assert!(!cancel.is_cancelled());
    }

    /// Other arguments, another alias, a model call for a tool call, one call more, one call fewer: each
    /// the first divergence, with the run cancelled when the replayed run made the call.
    #[test]
    fn divergences() {
        let recorded = |k: i64| Some(echo(json!({"k": k}), k).key);
        let other = Some(CallKey {
            kind: CallKind::Tool,
            alias: "fx.echo".to_owned(),
            digest: Some(value_digest(&json!({"k": 9}))),
        });
        let (s, cancel) = script(vec![echo(json!({"k": 1}), 1)]);
        assert_eq!(value(&s.call("m", "fx.echo", Some(json!({"k": 9})))), None);
        assert!(cancel.is_cancelled());
        assert_eq!(s.divergence(), Some(Divergence { position: 1, recorded: recorded(1), replayed: other }));
        // Once diverged, nothing more is answered, and the first divergence stays.
        assert_eq!(value(&s.call("m", "fx.echo", Some(json!({"k": 1})))), None);
        assert_eq!(s.divergence().map(|d| d.position), Some(1));

        let (s, _) = script(vec![echo(json!({"k": 1}), 1)]);
        s.call("m", "fx.read", Some(json!({"k": 1})));
        assert_eq!(s.divergence().and_then(|d| d.replayed).map(|k| k.alias), Some("fx.read".to_owned()));

        let (s, _) = script(vec![echo(json!({"k": 1}), 1)]);
        assert_eq!(
            s.chat("llm", Some(json!({"messages": []}))),
            ModelReply::Failed { class: ModelFailure::Unavailable, dispatch: Dispatch::False }
        );
        assert_eq!(s.divergence().and_then(|d| d.replayed).map(|k| k.kind), Some(CallKind::Model));

        let (s, _) = script(vec![echo(json!({"k": 1}), 1)]);
        s.call("m", "fx.echo", Some(json!({"k": 1})));
        s.call("m", "fx.echo", Some(json!({"k": 2})));
        let more = s.divergence().expect("one call more");
        assert_eq!((more.position, more.recorded), (2, None));

        let (s, cancel) = script(vec![echo(json!({"k": 1}), 1), echo(json!({"k": 2}), 2)]);
        s.call("m", "fx.echo", Some(json!({"k": 1})));
        assert_eq!(s.divergence(), Some(Divergence { position: 2, recorded: recorded(2), replayed: None }));
        assert!(!cancel.is_cancelled());
    }

    /// Arguments that did not convert match a record whose digest is `null`.
    #[test]
    fn unconvertible_arguments_match_a_null_digest() {
        let key = CallKey { kind: CallKind::Tool, alias: "fx.echo".to_owned(), digest: None };
        let reply = ToolReply::failed(FailureClass::McpRequestInvalid, Dispatch::False);
        let (s, _) = script(vec![HostCall { key, answer: Answer::Tool(reply.clone()) }]);
        assert_eq!(s.call("m", "fx.echo", None).reply, reply);
        assert_eq!(s.divergence(), None);
    }

    /// replay.md §3: the grant set as CONFIG has it (aliases in order, its effects), with the facts the
    /// trace's `listing` record holds; an alias it does not hold ends the run as not replayable.
    #[test]
    fn granted_tools_from_the_listing() {
        use super::super::trace::ListedFacts;
        use crate::apps::selection::Grant;
        use crate::config::host::ToolEffect;

        let grant = |upstream: &str, effect| Grant {
            declaration: "fx".to_owned(),
            upstream_tool: upstream.to_owned(),
            effect,
        };
        let mut selections = Selections::default();
        let grants =
            [("fx.write", grant("write", ToolEffect::Write)), ("fx.echo", grant("echo", ToolEffect::Read))];
        selections
            .missions
            .insert("m".to_owned(), grants.into_iter().map(|(a, g)| (a.to_owned(), g)).collect());
        let facts = |description: &str| ListedFacts {
            description: Some(description.to_owned()),
            input_schema: Arc::new(json!({"type": "object"})),
            output_schema: Some(Arc::new(json!({"type": "string"}))),
        };
        let mut listed = BTreeMap::new();
        listed.insert("fx.echo".to_owned(), facts("Echoes."));
        listed.insert("fx.write".to_owned(), facts("Writes."));
        let mut listings = Listings::new();
        listings.insert("m".to_owned(), listed.clone());
        let cancel = CancelToken::new();
        let s = Script::new(selections.clone(), Vec::new(), listings, cancel.clone());
        let shown: Vec<_> = s
            .granted_tools("m")
            .into_iter()
            .map(|t| (t.alias, t.description, t.effect, t.output_schema.map(|o| (*o).clone())))
            .collect();
        let output = Some(json!({"type": "string"}));
        assert_eq!(
            shown,
            [
                ("fx.echo".to_owned(), Some("Echoes.".to_owned()), ToolEffect::Read, output.clone()),
                ("fx.write".to_owned(), Some("Writes.".to_owned()), ToolEffect::Write, output),
            ]
        );
        assert_eq!(s.granted_tools("other"), Vec::new());
        assert!(!s.needed_listing() && !cancel.is_cancelled());

        // An alias granted since the recording: not listed, so the run ends.
        listed.remove("fx.write");
        let mut listings = Listings::new();
        listings.insert("m".to_owned(), listed);
        let cancel = CancelToken::new();
        let s = Script::new(selections, Vec::new(), listings, cancel.clone());
        assert_eq!(s.granted_tools("m"), Vec::new());
        assert!(s.needed_listing() && cancel.is_cancelled());
    }
}
