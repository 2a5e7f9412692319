//! Writing pins into a gateway document's text (lifecycle.md §1.3, `ptc pin`): the new values of each
//! tool's three pin members, with every other byte of the document kept, so key order, indentation and the
//! operator's own layout survive.
//!
//! Owns a small scanner that finds, in a document the strict decoder has already accepted, the `tools`
//! array's objects and the byte span of each member's value, and the rendering of a replaced or inserted
//! value in the layout around it. Pure: it reads and writes no file (the command does, atomically).

use serde_json::{Map, Value};

use crate::json::{self, Limits};

/// The three pin members of a tool, in the order a missing one is inserted.
pub const PIN_FIELDS: [&str; 3] =
    ["expected_application_content_digest", "installation_config_pins", "provider_snapshot_pins"];

/// One member of a scanned object: its decoded key and the byte span of its value.
#[derive(Clone, Debug)]
struct Member {
    key: String,
    /// Where the member begins (its key's opening quote).
    start: usize,
    value: std::ops::Range<usize>,
}

/// A scanned object: its members and the position of its closing brace.
#[derive(Clone, Debug)]
struct Object {
    open: usize,
    members: Vec<Member>,
    close: usize,
}

/// One changed field: the tool, the member, its old value (`None` when absent) and its new value.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub tool: String,
    pub field: &'static str,
    pub old: Option<Value>,
    pub new: Value,
}

impl Change {
    /// The line `ptc pin` prints: `<tool>: <field> <old> → <new>`, values as deterministic JSON.
    pub fn line(&self) -> String {
        let old = self.old.as_ref().map_or_else(|| "(absent)".to_owned(), json::to_deterministic_string);
        format!("{}: {} {} → {}", self.tool, self.field, old, json::to_deterministic_string(&self.new))
    }
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// A string's span, from its opening quote to after its closing quote.
    fn string(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at;
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }

    /// Any value's span; objects and arrays by bracket matching outside strings.
    fn value(&mut self) -> Option<std::ops::Range<usize>> {
        self.skip_space();
        let start = self.at;
        match self.peek()? {
            b'"' => return self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(start..self.at);
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                {
                    self.at += 1;
                }
            }
        }
        (self.at > start).then_some(start..self.at)
    }

    /// The object starting here.
    fn object(&mut self) -> Option<Object> {
        self.skip_space();
        let open = self.at;
        if self.peek()? != b'{' {
            return None;
        }
        self.at += 1;
        let mut members = Vec::new();
        loop {
            self.skip_space();
            match self.peek()? {
                b'}' => {
                    let close = self.at;
                    self.at += 1;
                    return Some(Object { open, members, close });
                }
                b',' => self.at += 1,
                _ => {
                    let key_span = self.string()?;
                    let key = match json::decode(&self.text[key_span.clone()], Limits::DOCUMENT).ok()? {
                        Value::String(key) => key,
                        _ => return None,
                    };
                    self.skip_space();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.at += 1;
                    let value = self.value()?;
                    members.push(Member { key, start: key_span.start, value });
                }
            }
        }
    }

    /// The elements of the array starting here, when each is an object.
    fn objects(&mut self) -> Option<Vec<Object>> {
        self.skip_space();
        if self.peek()? != b'[' {
            return None;
        }
        self.at += 1;
        let mut out = Vec::new();
        loop {
            self.skip_space();
            match self.peek()? {
                b']' => return Some(out),
                b',' => self.at += 1,
                _ => out.push(self.object()?),
            }
        }
    }
}

/// The indentation (spaces and tabs) of the line holding byte `at`.
fn indentation(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// A pin map in the layout of the value it replaces: on one line when that was on one line, else one
/// member per line, indented one `unit` deeper than `indent`.
fn render_map(map: &Map<String, Value>, multi_line: bool, indent: &str, unit: &str) -> String {
    if map.is_empty() {
        return "{}".to_owned();
    }
    let members: Vec<String> = map
        .iter()
        .map(|(k, v)| {
            format!(
                "{}: {}",
                json::to_deterministic_string(&Value::String(k.clone())),
                json::to_deterministic_string(v)
            )
        })
        .collect();
    if multi_line {
        let inner = format!("{indent}{unit}");
        format!("{{\n{inner}{}\n{indent}}}", members.join(&format!(",\n{inner}")))
    } else {
        format!("{{{}}}", members.join(", "))
    }
}

fn render(value: &Value, old: &str, indent: &str, unit: &str) -> String {
    match value {
        Value::Object(map) => render_map(map, old.contains('\n'), indent, unit),
        other => json::to_deterministic_string(other),
    }
}

/// The document's indent unit: the indentation of its first indented line (two spaces when none is).
fn indent_unit(text: &str) -> String {
    text.lines()
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|i| !i.is_empty())
        .unwrap_or("  ")
        .to_owned()
}

/// The document `text` with each tool's three pin members set to `pins[<tool name>]` (an object with the
/// three members, as `--print-pins` prints it), and the changes made, in document order. `None` when the
/// text is not a gateway document this scanner can follow (no top-level `tools` array of objects with
/// string `name`s); a tool that `pins` does not name is left alone.
pub fn rewrite(text: &str, pins: &Value) -> Option<(String, Vec<Change>)> {
    let mut scanner = Scanner { text: text.as_bytes(), at: 0 };
    let root = scanner.object()?;
    let tools_member = root.members.iter().find(|m| m.key == "tools")?;
    let tools = Scanner { text: text.as_bytes(), at: tools_member.value.start }.objects()?;
    let unit = indent_unit(text);
    // Edits as (range, replacement), applied from the end so earlier spans stay valid.
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut changes = Vec::new();
    for tool in &tools {
        let name_member = tool.members.iter().find(|m| m.key == "name")?;
        let name = match json::decode(&text.as_bytes()[name_member.value.clone()], Limits::DOCUMENT).ok()? {
            Value::String(name) => name,
            _ => return None,
        };
        let Some(wanted) = pins.get(&name) else { continue };
        let mut inserted = Vec::new();
        for field in PIN_FIELDS {
            let Some(new) = wanted.get(field) else { continue };
            match tool.members.iter().find(|m| m.key == field) {
                Some(member) => {
                    let old_text = &text[member.value.clone()];
                    let old = json::decode(old_text.as_bytes(), Limits::DOCUMENT).ok();
                    if old.as_ref() == Some(new) {
                        continue;
                    }
                    let indent = indentation(text, member.start);
                    edits.push((member.value.clone(), render(new, old_text, indent, &unit)));
                    changes.push(Change { tool: name.clone(), field, old, new: new.clone() });
                }
                None => {
                    inserted.push((field, new.clone()));
                    changes.push(Change { tool: name.clone(), field, old: None, new: new.clone() });
                }
            }
        }
        if inserted.is_empty() {
            continue;
        }
        // Missing members go after the tool's last member, in its layout.
        let (after, indent, multi_line) = match tool.members.last() {
            Some(last) => (
                last.value.end,
                indentation(text, last.start).to_owned(),
                text[tool.open..tool.close].contains('\n'),
            ),
            None => (tool.open + 1, format!("{}{unit}", indentation(text, tool.open)), false),
        };
        let mut insertion = String::new();
        for (i, (field, value)) in inserted.iter().enumerate() {
            let separator = if tool.members.is_empty() && i == 0 { "" } else { "," };
            let key = json::to_deterministic_string(&Value::from(*field));
            let value = render(value, if multi_line { "\n" } else { "" }, &indent, &unit);
            if multi_line {
                insertion.push_str(&format!("{separator}\n{indent}{key}: {value}"));
            } else {
                insertion.push_str(&format!("{separator} {key}: {value}"));
            }
        }
        edits.push((after..after, insertion));
    }
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = text.to_owned();
    for (range, replacement) in edits {
        out.replace_range(range, &replacement);
    }
    Some((out, changes))
}

#[cfg(test)]
#[path = "rewrite_tests.rs"]
mod tests;
