//! `ptc list ENDPOINT [--json]` (lifecycle.md §1.4): the tools a running gateway serves, for a person (one
//! line each: name, `read` or `write`, title and the first line of the description) or raw (`--json`, the
//! `tools/list` result as deterministic JSON).
//!
//! Owns the command line and the rendering. The endpoint, token, request and answer checks are `ptc call`'s
//! (`args`, `http`, `response`), so the two commands cannot differ on them; so are the exit statuses
//! (0, or 2 with one `ptc list: <reason>` line).

use std::ffi::OsString;
use std::io::Write;

use serde_json::Value;

use super::failure::{Failure, Step};
use super::{args, body, http, response};
use crate::json::to_deterministic_string;

/// A description's first line is cut to this many characters on the human listing.
pub const DESCRIPTION_CHARS: usize = 100;

/// The parsed command line.
struct ListArgs {
    endpoint: args::Endpoint,
    json: bool,
}

fn parse(argv: &[OsString]) -> Result<ListArgs, Failure> {
    let mut endpoint = None;
    let mut json = false;
    let mut options_done = false;
    for arg in argv {
        let text = arg.to_str().ok_or(Failure::ListUsage("an argument is not UTF-8"))?;
        if !options_done && text == "--" {
            options_done = true;
        } else if !options_done && text == "--json" {
            if json {
                return Err(Failure::ListUsage("--json given twice"));
            }
            json = true;
        } else if !options_done && text.starts_with('-') && text.len() > 1 {
            return Err(Failure::ListUsage("unknown option"));
        } else if endpoint.replace(text.to_owned()).is_some() {
            return Err(Failure::ListUsage("expected exactly ENDPOINT"));
        }
    }
    let endpoint = endpoint.ok_or(Failure::ListUsage("expected exactly ENDPOINT"))?;
    let endpoint = args::parse_endpoint(&endpoint)
        .ok_or(Failure::ListUsage("ENDPOINT must be http://127.0.0.1:PORT/mcp or http://[::1]:PORT/mcp"))?;
    Ok(ListArgs { endpoint, json })
}

/// Runs `ptc list` with `argv` (after `list`) and the value of `PTC_GATEWAY_TOKEN`; returns the exit
/// status after writing stdout or stderr. Blocking.
pub fn run(argv: &[OsString], token: Option<OsString>) -> u8 {
    let listed = parse(argv).and_then(|parsed| {
        let token = args::token(token)?;
        let answer = http::post(&parsed.endpoint, &token, Step::List, &[], &body(1, "tools/list", None))?;
        Ok((response::listing(&answer)?, parsed.json))
    });
    let text = match listed {
        Ok((result, true)) => format!("{}\n", to_deterministic_string(&result)),
        Ok((result, false)) => match render(&result) {
            Some(text) => text,
            None => {
                let failure = Failure::Malformed { step: Step::List, what: "a tool without a name" };
                let _ = writeln!(std::io::stderr().lock(), "ptc list: {failure}");
                return 2;
            }
        },
        Err(failure) => {
            let _ = writeln!(std::io::stderr().lock(), "ptc list: {failure}");
            return 2;
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(_) => 2,
    }
}

/// Keeps one line of a peer's text: control characters become `?`.
fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// The human listing: `<name padded>  <read|write>  <title> — <first description line>` per tool, in the
/// listing's order; `None` when a tool has no name.
pub fn render(result: &Value) -> Option<String> {
    let tools = result.get("tools")?.as_array()?;
    let names: Vec<String> =
        tools.iter().map(|t| t.get("name").and_then(Value::as_str).map(printable)).collect::<Option<_>>()?;
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (tool, name) in tools.iter().zip(&names) {
        let read = tool.get("annotations").and_then(|a| a.get("readOnlyHint")).and_then(Value::as_bool)
            == Some(true);
        let effect = if read { "read " } else { "write" };
        let title = tool.get("title").and_then(Value::as_str).map(printable).unwrap_or_default();
        let first =
            tool.get("description").and_then(Value::as_str).and_then(|d| d.lines().next()).unwrap_or("");
        let mut description: String = printable(first).chars().take(DESCRIPTION_CHARS).collect();
        if first.chars().count() > DESCRIPTION_CHARS {
            description.push('…');
        }
        let line = match (title.is_empty(), description.is_empty()) {
            (false, false) => format!("{name:<width$}  {effect}  {title} — {description}"),
            (false, true) => format!("{name:<width$}  {effect}  {title}"),
            (true, false) => format!("{name:<width$}  {effect}  {description}"),
            (true, true) => format!("{name:<width$}  {effect}"),
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    // lifecycle.md §1.4 vectors LS1–LS3: the human rendering of a listing.
    #[test]
    fn rendering() {
        let long = "d".repeat(120);
        let listing = format!(
            r#"{{"tools":[{{"name":"echo","title":"Echo","description":"Return the input.\nSecond line.","annotations":{{"readOnlyHint":true}}}},
               {{"name":"remember","title":"Remember","description":"{long}","annotations":{{"readOnlyHint":false}}}},
               {{"name":"x","annotations":{{}}}}]}}"#
        );
        let got = render(&decode(listing.as_bytes(), Limits::DOCUMENT).unwrap()).unwrap();
        let want = format!(
            "echo      read   Echo — Return the input.\nremember  write  Remember — {}…\nx         write\n",
            "d".repeat(100)
        );
        assert_eq!(got, want);
        assert_eq!(render(&decode(br#"{"tools":[{"title":"no name"}]}"#, Limits::DOCUMENT).unwrap()), None);
        assert_eq!(render(&decode(br#"{"tools":[]}"#, Limits::DOCUMENT).unwrap()), Some(String::new()));
    }
}
