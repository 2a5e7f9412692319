//! What `ptc replay` prints (replay.md §6): for a person, the runs that are not `same` with what differs
//! and the summary line; with `--json`, one object.
//!
//! Owns the exact texts and the JSON shape, the bound on shown values and the first difference of two
//! results. Does not own the verdicts (`run`).

use serde_json::{Map, Value};

use super::port::Divergence;
use super::run::{RunResult, Verdict};
use super::trace::CallKey;
use crate::apps::runtime::LuauError;
use crate::json::to_deterministic_string;

/// A value shown to a person is its deterministic encoding cut to this many bytes, then `…`.
pub(crate) const SHOWN_BYTES: usize = 200;

/// The counts of the summary line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub same: usize,
    pub different: usize,
    pub diverged: usize,
    pub not_replayable: usize,
}

impl Counts {
    pub(crate) fn of(results: &[RunResult]) -> Counts {
        let mut counts = Counts::default();
        for result in results {
            match result.verdict {
                Verdict::Same { .. } => counts.same += 1,
                Verdict::Different { .. } => counts.different += 1,
                Verdict::Diverged { .. } => counts.diverged += 1,
                Verdict::NotReplayable(_) => counts.not_replayable += 1,
            }
        }
        counts
    }

    fn runs(self) -> usize {
        self.same + self.different + self.diverged + self.not_replayable
    }
}

/// replay.md §6.1: one block per run that is not `same`, then the summary line.
pub(crate) fn person(results: &[RunResult]) -> String {
    let mut text = String::new();
    for result in results {
        block(&mut text, result);
    }
    let c = Counts::of(results);
    text.push_str(&format!(
        "{} runs: {} same, {} different, {} diverged, {} not replayable\n",
        c.runs(),
        c.same,
        c.different,
        c.diverged,
        c.not_replayable
    ));
    text
}

fn block(text: &mut String, result: &RunResult) {
    let head = format!("{} {}", result.run_ref, result.tool);
    match &result.verdict {
        Verdict::Same { .. } => {}
        Verdict::NotReplayable(reason) => {
            text.push_str(&format!("{head}: not replayable: {}\n", reason.as_str()))
        }
        Verdict::Different { recorded_digest, recorded_result, replayed } => {
            text.push_str(&format!("{head}: different\n"));
            let recorded = whole(recorded_result.as_ref());
            let held = match (recorded, recorded_result) {
                (Some(value), _) => shown(value),
                (None, Some(_)) => {
                    format!("{recorded_digest} (the trace holds the result cut at the value ceiling)")
                }
                (None, None) => format!("{recorded_digest} (the trace holds only its digest)"),
            };
            line(text, "recorded", &held);
            line(text, "replayed", &shown(&replayed.result));
            if let Some(value) = recorded {
                line(text, "first difference", &first_difference(value, &replayed.result));
            }
            if shows_address(&replayed.result) {
                line(text, "note", ADDRESS_NOTE);
            }
            error_lines(text, replayed.error.as_ref());
        }
        Verdict::Diverged { divergence, error } => {
            text.push_str(&format!("{head}: diverged at host call {}\n", divergence.position));
            let call = |key: &Option<CallKey>, none: &str| match key {
                Some(key) => {
                    format!("{} {} {}", key.kind.as_str(), key.alias, key.digest.as_deref().unwrap_or("null"))
                }
                None => none.to_owned(),
            };
            line(text, "recorded", &call(&divergence.recorded, "(none: the trace has no more host calls)"));
            line(text, "replayed", &call(&divergence.replayed, "(none: the run ended)"));
            error_lines(text, error.as_ref());
        }
    }
}

/// replay.md §5: what a person is told when a replayed result shows a Luau address.
pub(crate) const ADDRESS_NOTE: &str =
    "the replayed result shows a Luau address (tostring of a table, function, userdata, buffer or thread), which differs from run to run";

/// Whether a value's encoding holds the text `tostring` gives a value that has no other (replay.md §5):
/// `<type>: 0x` followed by hexadecimal digits.
pub(crate) fn shows_address(value: &Value) -> bool {
    let text = to_deterministic_string(value);
    ["table: 0x", "function: 0x", "userdata: 0x", "buffer: 0x", "thread: 0x"].iter().any(|prefix| {
        text.match_indices(prefix)
            .any(|(i, _)| text[i + prefix.len()..].chars().next().is_some_and(|c| c.is_ascii_hexdigit()))
    })
}

/// One indented `key: value` line; a value of several lines continues under its first character.
fn line(text: &mut String, key: &str, value: &str) {
    let mut lines = value.split('\n');
    text.push_str(&format!("  {key}: {}\n", lines.next().unwrap_or_default()));
    for more in lines {
        text.push_str(&format!("  {:width$}  {more}\n", "", width = key.len()));
    }
}

fn error_lines(text: &mut String, error: Option<&LuauError>) {
    if let Some(error) = error {
        line(text, "error", &error.message);
        if let Some(traceback) = &error.traceback {
            line(text, "traceback", traceback);
        }
    }
}

/// The value a recorded value field holds whole (traces.md §6.1), if it does.
fn whole(field: Option<&Value>) -> Option<&Value> {
    match field? {
        Value::Object(members) if members.len() == 1 => members.get("value"),
        _ => None,
    }
}

/// A value's deterministic encoding, cut to [`SHOWN_BYTES`] on a character boundary, then `…`.
pub(crate) fn shown(value: &Value) -> String {
    let text = to_deterministic_string(value);
    if text.len() <= SHOWN_BYTES {
        return text;
    }
    let mut cut = SHOWN_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// The JSON pointer (RFC 6901) of the first place where two values differ, members in byte order and
/// elements in index order; `""` is written `(the whole value)`.
pub(crate) fn first_difference(recorded: &Value, replayed: &Value) -> String {
    let pointer = pointer_of(recorded, replayed).unwrap_or_default();
    if pointer.is_empty() {
        "(the whole value)".to_owned()
    } else {
        pointer
    }
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn pointer_of(a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| match (x.get(key), y.get(key)) {
                (Some(u), Some(v)) => pointer_of(u, v).map(|rest| format!("/{}{rest}", escape(key))),
                _ => Some(format!("/{}", escape(key))),
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            let common = x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (u, v))| pointer_of(u, v).map(|r| format!("/{i}{r}")));
            common.or_else(|| (x.len() != y.len()).then(|| format!("/{}", x.len().min(y.len()))))
        }
        _ if a == b => None,
        _ => Some(String::new()),
    }
}

/// replay.md §6.2: the `--json` object.
pub(crate) fn json(results: &[RunResult]) -> String {
    let c = Counts::of(results);
    let mut out = Map::new();
    out.insert("runs".into(), Value::from(c.runs()));
    out.insert("same".into(), Value::from(c.same));
    out.insert("different".into(), Value::from(c.different));
    out.insert("diverged".into(), Value::from(c.diverged));
    out.insert("not_replayable".into(), Value::from(c.not_replayable));
    out.insert("results".into(), Value::Array(results.iter().map(result).collect()));
    let mut text = to_deterministic_string(&Value::Object(out));
    text.push('\n');
    text
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn result(result: &RunResult) -> Value {
    object(vec![
        ("run_ref", Value::from(result.run_ref.as_str())),
        ("tool", Value::from(result.tool.as_str())),
        ("verdict", Value::from(result.verdict.as_str())),
        ("detail", detail(&result.verdict)),
    ])
}

fn error_value(error: Option<&LuauError>) -> Value {
    match error {
        Some(error) => object(vec![
            ("message", Value::from(error.message.as_str())),
            ("traceback", error.traceback.as_deref().map_or(Value::Null, Value::from)),
        ]),
        None => Value::Null,
    }
}

fn call_value(key: &Option<CallKey>) -> Value {
    match key {
        Some(key) => object(vec![
            ("kind", Value::from(key.kind.as_str())),
            ("alias", Value::from(key.alias.as_str())),
            ("digest", key.digest.as_deref().map_or(Value::Null, Value::from)),
        ]),
        None => Value::Null,
    }
}

fn detail(verdict: &Verdict) -> Value {
    match verdict {
        Verdict::Same { result_digest } => {
            object(vec![("result_digest", Value::from(result_digest.as_str()))])
        }
        Verdict::NotReplayable(reason) => object(vec![("reason", Value::from(reason.as_str()))]),
        Verdict::Different { recorded_digest, recorded_result, replayed } => {
            let difference = whole(recorded_result.as_ref()).map_or(Value::Null, |value| {
                Value::from(pointer_of(value, &replayed.result).unwrap_or_default())
            });
            object(vec![
                (
                    "recorded",
                    object(vec![
                        ("result", recorded_result.clone().unwrap_or(Value::Null)),
                        ("result_digest", Value::from(recorded_digest.as_str())),
                    ]),
                ),
                (
                    "replayed",
                    object(vec![
                        ("outcome", Value::from(replayed.outcome.as_str())),
                        ("result", object(vec![("value", replayed.result.clone())])),
                        ("result_digest", Value::from(replayed.result_digest.as_str())),
                        ("error", error_value(replayed.error.as_ref())),
                    ]),
                ),
                ("first_difference", difference),
                ("shows_address", Value::Bool(shows_address(&replayed.result))),
            ])
        }
        Verdict::Diverged { divergence, error } => {
            let Divergence { position, recorded, replayed } = divergence;
            object(vec![
                ("position", Value::from(*position)),
                ("recorded", call_value(recorded)),
                ("replayed", call_value(replayed)),
                ("error", error_value(error.as_ref())),
            ])
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn first_difference_is_a_pointer() {
        let cases = [
            (json!({"a": 1, "b": {"c": [1, 2]}}), json!({"a": 1, "b": {"c": [1, 3]}}), "/b/c/1"),
            (json!({"a": 1}), json!({"a": 1, "b": 2}), "/b"),
            (json!([1]), json!([1, 2]), "/1"),
            (json!({"a/b": 1}), json!({"a/b": 2}), "/a~1b"),
            (json!("x"), json!({"x": 1}), "(the whole value)"),
        ];
        for (a, b, want) in cases {
            assert_eq!(first_difference(&a, &b), want, "{a} {b}");
        }
    }

    #[test]
    fn an_address_is_detected() {
        assert!(shows_address(&json!({"t": "table: 0x00007f3a9c0041d0"})));
        assert!(shows_address(&json!(["function: 0xdeadbeef"])));
        assert!(!shows_address(&json!({"t": "table: 0x"})));
        assert!(!shows_address(&json!({"text": "a table: of contents"})));
    }

    #[test]
    fn shown_values_are_bounded() {
        assert_eq!(shown(&json!({"a": 1})), r#"{"a":1}"#);
        let long = shown(&json!("é".repeat(300)));
        assert!(long.ends_with('…') && long.len() <= SHOWN_BYTES + '…'.len_utf8());
    }
}
