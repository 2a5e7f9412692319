//! The closed codes that several layers share: each is a wire spelling fixed by the specification, and
//! adding a variant is a contract change.
//!
//! Owns the code types and their spellings only: [`startup`] the startup catalog (lifecycle.md §4). It
//! does not decide when a code applies (the layers that report them do). A leaf module: it imports
//! nothing of this crate, so every layer can name these codes without depending on the layer that
//! reports them.

pub mod startup;

pub use startup::StartupCode;
