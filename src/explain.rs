//! Facts about a startup refusal, noted where they are known, for `ptc check` (lifecycle.md §1.5).
//!
//! A startup stage refuses with one closed code (lifecycle.md §4), which is all a machine needs. A person
//! needs more: which document, which key, which tool, which digests. Those facts are known deep inside the
//! stage that refused (a schema walk knows the pointer, a pin comparison knows both digests), where
//! threading a richer error type through every layer would change every signature the tests pin. So a
//! refusing site *notes* its facts here, and `ptc check` gathers them around its run of the stages.
//!
//! Owns: the closed set of fact keys, their printing order, and the task-local collection. Does not own
//! which stages run (`startup::check`) or the refusal codes (`codes::startup`). Outside a [`gather`] scope
//! (serving, discovery, tests of the stages) a note costs one task-local lookup and is dropped.
//!
//! **Never a secret.** A fact names things (paths, keys, tool and installation names, digests, classes,
//! numbers); no site may note a credential value, a bearer, file content or an upstream's text
//! (lifecycle.md §1.5, the security rule of the README).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;

/// One kind of fact. The declaration order is the printing order of lifecycle.md §1.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Fact {
    /// The startup stage, as `<number> <name>` of lifecycle.md §3.2.
    Stage,
    /// The document that was being read: the gateway or host document, or a tool's manifest.
    Document,
    /// The tool the refusal concerns.
    Tool,
    /// A Luau component or a contract file of a tool's application: its path as the manifest names it,
    /// with the line (and column) of the fault, `file:line[:column]` as compilers print it.
    Component,
    /// The installation alias (config.md §5.3) or the provider declaration the refusal concerns.
    Installation,
    /// The credential binding name (never its value).
    Binding,
    /// Where a credential binding is read from: `env <VARIABLE>` or `file <path>` (never its value).
    Source,
    /// A JSON pointer into [`Fact::Document`].
    Pointer,
    /// The pin member or document member the refusal concerns.
    Field,
    /// Why: a fixed sentence of the rule that refused.
    Reason,
    /// The refused line of a JSON document and a caret under the refused character (two lines), for a
    /// decode failure of a document that holds no credential (lifecycle.md §1.5).
    Excerpt,
    /// Luau's own message for a component that does not compile.
    Message,
    /// A provider failure class (providers.md §14).
    Class,
    /// The configured value (a digest or pin map).
    Expected,
    /// The value startup computed.
    Computed,
    /// A file or directory of the storage stages.
    Path,
    /// A listener's address (`<ip>:<port>`).
    Address,
    /// Numbers of the descriptor budget or a size bound: what is needed.
    Needed,
    /// Numbers of the descriptor budget or a size bound: what is available or allowed.
    Available,
    /// What to do next, when one thing clearly is.
    Hint,
}

impl Fact {
    /// The key printed before the value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Fact::Stage => "stage",
            Fact::Document => "document",
            Fact::Tool => "tool",
            Fact::Installation => "installation",
            Fact::Binding => "binding",
            Fact::Source => "source",
            Fact::Pointer => "pointer",
            Fact::Field => "field",
            Fact::Reason => "reason",
            Fact::Excerpt => "excerpt",
            Fact::Component => "component",
            Fact::Message => "message",
            Fact::Class => "class",
            Fact::Expected => "expected",
            Fact::Computed => "computed",
            Fact::Path => "path",
            Fact::Address => "address",
            Fact::Needed => "needed",
            Fact::Available => "available",
            Fact::Hint => "hint",
        }
    }
}

/// The facts noted so far, one value per key (a later note of a key replaces the earlier one, so the
/// refusing site, which notes last, wins over the context its callers noted).
pub(crate) type Facts = BTreeMap<Fact, String>;

tokio::task_local! {
    static FACTS: RefCell<Facts>;
}

/// Notes one fact for the surrounding [`gather`], if any.
pub(crate) fn note(fact: Fact, value: impl Into<String>) {
    let _ = FACTS.try_with(|facts| facts.borrow_mut().insert(fact, value.into()));
}

/// Notes a fact whose value is costly to build only when someone gathers.
pub(crate) fn note_with(fact: Fact, value: impl FnOnce() -> String) {
    let _ = FACTS.try_with(|facts| facts.borrow_mut().insert(fact, value()));
}

/// Notes a fact unless one of its key is already noted: a general sentence that must not hide the
/// specific one a deeper site noted first.
pub(crate) fn note_if_absent(fact: Fact, value: impl Into<String>) {
    let _ = FACTS.try_with(|facts| {
        facts.borrow_mut().entry(fact).or_insert_with(|| value.into());
    });
}

/// Forgets every fact noted so far except `keep`: a stage that passed leaves nothing behind for the next.
pub(crate) fn clear_except(keep: &[Fact]) {
    let _ = FACTS.try_with(|facts| facts.borrow_mut().retain(|fact, _| keep.contains(fact)));
}

/// Runs `work` collecting the facts noted inside it (in its own task; a spawned task notes nothing).
pub(crate) async fn gather<F: Future>(work: F) -> (F::Output, Facts) {
    FACTS
        .scope(RefCell::new(Facts::new()), async move {
            let output = work.await;
            let facts = FACTS.try_with(|facts| facts.take()).unwrap_or_default();
            (output, facts)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notes_reach_only_the_surrounding_gather_and_the_last_note_of_a_key_wins() {
        note(Fact::Tool, "outside");
        let ((), facts) = gather(async {
            note(Fact::Tool, "first");
            note(Fact::Reason, "why");
            clear_except(&[Fact::Reason]);
            note(Fact::Tool, "second");
            note_with(Fact::Pointer, || "/a".to_owned());
        })
        .await;
        let got: Vec<(&str, &str)> = facts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, [("tool", "second"), ("pointer", "/a"), ("reason", "why")]);
    }
}
