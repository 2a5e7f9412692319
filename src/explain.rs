//! What a person is told about a startup refusal (lifecycle.md §1.5): the closed set of fact keys, their
//! printing order, and [`Refusal`], the value a refused stage returns.
//!
//! A startup stage refuses with one closed code (lifecycle.md §4), which is all a machine needs. A person
//! needs more: which document, which key, which tool, which digests, the operating system's reason. Each
//! layer's error type keeps that context as values (`config::DocumentError`, `apps::AppError`,
//! `pins::PinMismatch`, `config::credentials::CredentialError`, the storage and listener errors) and says
//! what it knows through [`Explain`]; a refusal keeps those facts, and its callers add the context they
//! own (the tool, the manifest, the stage) without replacing what the refusing site said. The one place that
//! prints them is `startup::check::render` (and serve mode's `startup refused` log line).
//!
//! Owns: the fact keys and their order, the [`Explain`] contract and [`Refusal`]. Does not own which stages
//! run (`startup::check`), the refusal codes (`codes::startup`) or any rule.
//!
//! **Never a secret.** A fact names things (paths, keys, tool and installation names, digests, classes,
//! numbers, the system's error message); no error may carry a credential value, a bearer, file content
//! beyond a refused JSON line of a document that holds no credential, or an upstream's text
//! (lifecycle.md §1.5, and the security rule of the README).

use std::collections::BTreeMap;

use crate::codes::StartupCode;

/// One kind of fact. The declaration order is the printing order of lifecycle.md §1.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fact {
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

/// The facts of one refusal, one value per key, printed in the order of [`Fact`].
pub type Facts = BTreeMap<Fact, String>;

/// A layer's error as a startup refusal: the closed code it ends as, and the facts it knows.
pub trait Explain {
    /// The startup code of lifecycle.md §4 this error ends as.
    fn code(&self) -> StartupCode;
    /// Writes the facts this error knows into `facts` (replacing a key already there: the error knows
    /// more precisely than the context around it).
    fn explain(&self, facts: &mut Facts);
}

/// A refused startup stage: its closed code and what a person needs to fix it.
///
/// Built from any layer's error through [`Explain`] (`?` converts), or from a bare code where there is
/// nothing more to say. Callers add their context with [`Refusal::context`], which never replaces a fact
/// the refusing site gave: the site that refused knows best.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", code.as_str())]
pub struct Refusal {
    pub code: StartupCode,
    pub facts: Facts,
}

impl Refusal {
    /// A refusal with no facts yet.
    pub(crate) fn new(code: StartupCode) -> Refusal {
        Refusal { code, facts: Facts::new() }
    }

    /// A refusal whose cause is an error of the gateway's own machinery (an actor that did not start, the
    /// process's start reference): the cause's message is the reason. Such messages name parts of the
    /// gateway, never a value of the configuration.
    pub(crate) fn because(code: StartupCode, cause: &dyn std::fmt::Display) -> Refusal {
        Refusal::new(code).with(Fact::Reason, cause.to_string())
    }

    /// Sets `fact` (replacing an earlier value): for the site that refuses.
    pub(crate) fn with(mut self, fact: Fact, value: impl Into<String>) -> Refusal {
        self.facts.insert(fact, value.into());
        self
    }

    /// Adds `fact` unless the refusal already has it: for the callers around the refusing site.
    pub(crate) fn context(mut self, fact: Fact, value: impl Into<String>) -> Refusal {
        self.facts.entry(fact).or_insert_with(|| value.into());
        self
    }
}

impl From<StartupCode> for Refusal {
    fn from(code: StartupCode) -> Refusal {
        Refusal::new(code)
    }
}

impl<E: Explain> From<E> for Refusal {
    fn from(error: E) -> Refusal {
        let mut refusal = Refusal::new(error.code());
        error.explain(&mut refusal.facts);
        refusal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Missing;

    impl Explain for Missing {
        fn code(&self) -> StartupCode {
            StartupCode::HostInvalid
        }
        fn explain(&self, facts: &mut Facts) {
            facts.insert(Fact::Pointer, "/a".to_owned());
            facts.insert(Fact::Reason, "why".to_owned());
        }
    }

    #[test]
    fn the_refusing_site_wins_over_the_context_its_callers_add() {
        let refusal = Refusal::from(Missing)
            .context(Fact::Reason, "a general sentence")
            .context(Fact::Tool, "echo")
            .with(Fact::Hint, "do this");
        assert_eq!(refusal.code, StartupCode::HostInvalid);
        let got: Vec<(&str, &str)> = refusal.facts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, [("tool", "echo"), ("pointer", "/a"), ("reason", "why"), ("hint", "do this")]);
    }
}
