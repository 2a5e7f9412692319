//! pins.md §9.2–§9.3 as vectors: each row a configured map, the expected or actual pins, and the code.

use super::*;
use crate::codes::StartupCode::{InstallationPinMismatch, ProviderPinMismatch};

const A: &str = "sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3";
const B: &str = "sha256:2e57eab140487245bd69921ef9fc2676b30842b49eb0ffdbbb1c306fe1d0b24c";

type Outcome = Result<(), StartupCode>;
/// A first-pass row: name, configured installation and snapshot maps, expected map, outcome.
type FirstPassRow = (&'static str, Option<PinMap>, Option<PinMap>, PinMap, Outcome);

fn map(members: &[(&str, &str)]) -> PinMap {
    members.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// pins.md §9.2 and §9.3 step 1, through the per-tool first pass.
#[test]
fn first_pass() {
    let none = map(&[]);
    let notes = map(&[("notes", A)]);
    let rows: Vec<FirstPassRow> = vec![
        ("provider-free, both empty", Some(none.clone()), Some(none.clone()), none.clone(), Ok(())),
        (
            "provider-free, installation member",
            Some(notes.clone()),
            Some(none.clone()),
            none.clone(),
            Err(ProviderPinMismatch),
        ),
        (
            "provider-free, snapshot member",
            Some(none.clone()),
            Some(map(&[("mission/notes", B)])),
            none.clone(),
            Err(ProviderPinMismatch),
        ),
        ("provider-free, absent maps (discovery)", None, None, none.clone(), Ok(())),
        ("exact", Some(notes.clone()), Some(none.clone()), notes.clone(), Ok(())),
        (
            "exact, snapshot not looked at yet",
            Some(notes.clone()),
            Some(map(&[("mission/x", A)])),
            notes.clone(),
            Ok(()),
        ),
        (
            "{} for a provider-bearing tool",
            Some(none.clone()),
            Some(none.clone()),
            notes.clone(),
            Err(InstallationPinMismatch),
        ),
        ("absent for a provider-bearing tool", None, None, notes.clone(), Err(InstallationPinMismatch)),
        ("different value", Some(map(&[("notes", B)])), None, notes.clone(), Err(InstallationPinMismatch)),
        (
            "value differing in case",
            Some(map(&[("notes", &A.to_uppercase())])),
            None,
            notes.clone(),
            Err(InstallationPinMismatch),
        ),
        (
            "extra key",
            Some(map(&[("notes", A), ("time", A)])),
            None,
            notes.clone(),
            Err(InstallationPinMismatch),
        ),
        (
            "missing key",
            Some(notes.clone()),
            None,
            map(&[("notes", A), ("time", A)]),
            Err(InstallationPinMismatch),
        ),
        ("key renamed", Some(map(&[("files", A)])), None, notes.clone(), Err(InstallationPinMismatch)),
    ];
    for (row, installation, snapshot, expected, want) in rows {
        let got =
            check_tool_first_pass(installation.as_ref(), snapshot.as_ref(), &expected).map_err(|e| e.code);
        assert_eq!(got, want, "{row}");
    }
}

/// pins.md §9.3 step 2.4 and the final key-set check.
#[test]
fn sites() {
    let configured = map(&[("mission/notes", B), ("mission/time", A)]);
    let rows: [(&str, Option<&PinMap>, &str, &str, Outcome); 5] = [
        ("equal", Some(&configured), "mission/notes", B, Ok(())),
        ("different pin", Some(&configured), "mission/notes", A, Err(ProviderPinMismatch)),
        ("no member for the site", Some(&configured), "mission/files", B, Err(ProviderPinMismatch)),
        (
            "workflow key is not the mission site",
            Some(&configured),
            "workflow/notes",
            B,
            Err(ProviderPinMismatch),
        ),
        ("absent map", None, "mission/notes", B, Err(ProviderPinMismatch)),
    ];
    for (row, configured, key, pin, want) in rows {
        assert_eq!(check_site_snapshot(configured, key, pin).map_err(|e| e.code), want, "{row}");
    }
    let rows: [(&str, &[&str], Outcome); 4] = [
        ("same keys", &["mission/notes", "mission/time"], Ok(())),
        ("an extra configured key", &["mission/notes"], Err(ProviderPinMismatch)),
        (
            "more actual keys (their own check fails first)",
            &["mission/notes", "mission/time", "mission/x"],
            Ok(()),
        ),
        ("no sites", &[], Err(ProviderPinMismatch)),
    ];
    for (row, actual, want) in rows {
        assert_eq!(
            check_no_extra_sites(Some(&configured), actual.iter().copied()).map_err(|e| e.code),
            want,
            "{row}"
        );
    }
    assert_eq!(check_no_extra_sites(None, ["mission/notes"]), Ok(()));
    assert_eq!(check_no_extra_sites(Some(&map(&[])), std::iter::empty()), Ok(()));
}

#[test]
fn pin_map_as_json() {
    let value = super::super::to_value(&map(&[("notes", A)]));
    assert_eq!(crate::json::to_deterministic_string(&value), format!(r#"{{"notes":"{A}"}}"#));
}
