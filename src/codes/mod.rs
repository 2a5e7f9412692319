//! The closed codes that several layers share: each is a wire spelling fixed by the specification, and
//! adding a variant is a contract change.
//!
//! Owns the code types, their spellings and the properties the specification tables fix for them:
//! [`startup`] the startup catalog (lifecycle.md §4), [`provider`] the provider failure classes and
//! dispatch states (providers.md §14, §1), [`transport`] the `transport` record's fault (providers.md
//! providers.md §12.2), and [`outcome`] a call's outcome and dispatch codes (execution.md §6). It does not
//! decide when a code applies: the layers that report them do.
//!
//! A leaf module: it imports nothing of this crate, so every layer can name these codes without
//! depending on the layer that reports them.

pub mod outcome;
pub mod provider;
pub mod startup;
pub mod transport;

pub use startup::StartupCode;
