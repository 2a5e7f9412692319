//! Test vectors for the environment file (config.md §7.2, §7.4).

use super::*;
use crate::config::secret::TempDir;
use EnvFileErrorKind::*;

/// What parsing yields: the assignments in name order, or the refusal.
type Outcome = Result<Vec<(String, String)>, EnvFileError>;

fn assignments(file: &EnvFile) -> Vec<(String, String)> {
    file.names()
        .map(|n| (n.to_owned(), file.get(n).map(|v| v.expose().to_owned()).unwrap_or_default()))
        .collect()
}

fn one(line: &str) -> Outcome {
    parse(line.as_bytes()).map(|f| assignments(&f))
}

/// Every row of config.md §7.4, then edge cases of the grammar, one line each.
#[test]
fn line_table() {
    let ok = |name: &str, value: &str| Ok(vec![(name.to_owned(), value.to_owned())]);
    let ignored = Ok(vec![]);
    let bad = |kind| Err(EnvFileError { kind, line: 1 });
    let table: Vec<(&str, Outcome)> = vec![
        // config.md §7.4.
        ("GATEWAY_TOKEN=abc", ok("GATEWAY_TOKEN", "abc")),
        ("export GATEWAY_TOKEN=abc", ok("GATEWAY_TOKEN", "abc")),
        ("  KEY = value with spaces   ", ok("KEY", "value with spaces")),
        ("KEY=a#b", ok("KEY", "a#b")),
        ("KEY=a #comment", ok("KEY", "a")),
        ("KEY=#comment", ok("KEY", "")),
        ("KEY=", ok("KEY", "")),
        ("KEY='a b # c'", ok("KEY", "a b # c")),
        ("KEY=\"line\\nbreak\"", ok("KEY", "line\nbreak")),
        ("KEY=\"a\\qb\"", bad(InvalidEscape)),
        ("KEY=$HOME", ok("KEY", "$HOME")),
        ("KEY=\"unterminated", bad(UnterminatedQuote)),
        ("KEY", bad(MissingEquals)),
        ("1KEY=x", bad(InvalidName)),
        ("# comment", ignored.clone()),
        // Blank and comment lines.
        ("", ignored.clone()),
        (" \t ", ignored.clone()),
        ("\t# indented comment with 'quotes' and \"x", ignored.clone()),
        ("#", ignored.clone()),
        // `export`.
        ("export=1", ok("export", "1")),
        ("export =1", ok("export", "1")),
        ("export = 1", ok("export", "1")),
        ("export\tKEY=v", ok("KEY", "v")),
        ("export  export=2", ok("export", "2")),
        ("exportKEY=1", ok("exportKEY", "1")),
        ("export KEY", bad(MissingEquals)),
        ("export", bad(MissingEquals)),
        ("Export KEY=1", bad(MissingEquals)),
        // Names.
        ("_=1", ok("_", "1")),
        ("_a1=1", ok("_a1", "1")),
        ("key=lower", ok("key", "lower")),
        ("=value", bad(InvalidName)),
        ("K-EY=1", bad(InvalidName)),
        ("K.EY=1", bad(InvalidName)),
        ("ÉKEY=1", bad(InvalidName)),
        ("KEY x=1", bad(MissingEquals)),
        // Unquoted values.
        ("KEY=\t v \t", ok("KEY", "v")),
        ("KEY=a\tb", ok("KEY", "a\tb")),
        ("KEY=a\t#c", ok("KEY", "a")),
        ("KEY=  #c", ok("KEY", "")),
        ("KEY= ", ok("KEY", "")),
        ("KEY=a=b", ok("KEY", "a=b")),
        ("KEY=a'b\"c\\d", ok("KEY", "a'b\"c\\d")),
        ("KEY=${HOME}", ok("KEY", "${HOME}")),
        ("KEY=$(id)", ok("KEY", "$(id)")),
        ("KEY=~/x", ok("KEY", "~/x")),
        ("KEY=a##b # c # d", ok("KEY", "a##b")),
        ("KEY=é \u{2028}", ok("KEY", "é \u{2028}")),
        // Quoted values.
        ("KEY=''", ok("KEY", "")),
        ("KEY=\"\"", ok("KEY", "")),
        ("KEY='a'  # c", ok("KEY", "a")),
        ("KEY=\"a\"#c", ok("KEY", "a")),
        ("KEY='a' \t", ok("KEY", "a")),
        ("KEY = 'a'", ok("KEY", "a")),
        ("KEY='\\n $X \"'", ok("KEY", "\\n $X \"")),
        ("KEY=\"a\\\"b\\\\c\\td\"", ok("KEY", "a\"b\\c\td")),
        ("KEY=\"it's # here\"", ok("KEY", "it's # here")),
        ("KEY='a' x", bad(TextAfterQuote)),
        ("KEY='it''s'", bad(TextAfterQuote)),
        ("KEY=\"a\"b", bad(TextAfterQuote)),
        ("KEY='unterminated", bad(UnterminatedQuote)),
        ("KEY=\"a\\", bad(UnterminatedQuote)),
        ("KEY=\"a\\r\"", bad(InvalidEscape)),
        ("KEY=\"a\\u0041\"", bad(InvalidEscape)),
        ("KEY=\"a\\'\"", bad(InvalidEscape)),
    ];
    for (line, expected) in table {
        assert_eq!(one(line), expected, "line {line:?}");
    }
}

/// Names are at most 128 bytes.
#[test]
fn name_length() {
    let name = "N".repeat(128);
    assert_eq!(one(&format!("{name}=1")), Ok(vec![(name.clone(), "1".to_owned())]));
    assert_eq!(one(&format!("{name}N=1")), Err(EnvFileError { kind: InvalidName, line: 1 }));
}

/// Whole-file rules: line separators, CR handling, duplicates, size, UTF-8, NUL.
#[test]
fn file_rules() {
    let pairs = |v: &[(&str, &str)]| Ok(v.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect());
    let at = |kind, line| Err(EnvFileError { kind, line });
    let table: Vec<(&[u8], Outcome)> = vec![
        (b"", Ok(vec![])),
        (b"\n\n", Ok(vec![])),
        (b"A=1", pairs(&[("A", "1")])),
        (b"A=1\nB=2\n", pairs(&[("A", "1"), ("B", "2")])),
        (b"A=1\r\nB='x'\r\n", pairs(&[("A", "1"), ("B", "x")])),
        (b"A=1 \r\n# c\r\n\r\nB=2", pairs(&[("A", "1"), ("B", "2")])),
        (b"A=1\r", at(StrayCarriageReturn, 1)),
        (b"A=1\rB=2\n", at(StrayCarriageReturn, 1)),
        (b"A=1\n\rB=2", at(StrayCarriageReturn, 2)),
        (b"A=1\r\r\n", at(StrayCarriageReturn, 1)),
        (b"A=\"x\r\ny\"", at(UnterminatedQuote, 1)),
        (b"A=1\nA=2", at(DuplicateName, 2)),
        (b"A=1\nexport A=", at(DuplicateName, 2)),
        (b"A=1\na=2", pairs(&[("A", "1"), ("a", "2")])),
        (b"A=1\nB=2\nKEY\n", at(MissingEquals, 3)),
        (b"A=1\nB=\xFF\n", at(InvalidUtf8, 2)),
        (b"A=\xC0\xAF", at(InvalidUtf8, 1)),
        (b"A=1\n\nB=\x00", at(Nul, 3)),
        (b"# \x00", at(Nul, 1)),
    ];
    for (bytes, expected) in table {
        assert_eq!(parse(bytes).map(|f| assignments(&f)), expected, "{:?}", String::from_utf8_lossy(bytes));
    }
}

/// The 65,536-byte bound (config.md §7.1).
#[test]
fn size_bound() {
    let mut bytes = b"A=".to_vec();
    bytes.resize(MAX_ENV_FILE_BYTES, b'x');
    assert_eq!(parse(&bytes).map(|f| f.get("A").map(Secret::len)), Ok(Some(65_534)));
    bytes.push(b'x');
    assert_eq!(parse(&bytes).err(), Some(EnvFileError { kind: TooLarge, line: 0 }));
}

/// `read` requires a readable regular file (symbolic links followed) within the bound.
#[test]
fn read_from_disk() {
    let dir = TempDir::new("envfile");
    let good = dir.write("e.env", b"GATEWAY_TOKEN=abc\n");
    assert_eq!(
        read(&good).map(|f| assignments(&f)),
        Ok(vec![("GATEWAY_TOKEN".to_owned(), "abc".to_owned())])
    );
    let link = dir.path("link.env");
    std::os::unix::fs::symlink(&good, &link).expect("symlink");
    assert!(read(&link).is_ok());
    let whole = |kind| Some(EnvFileError { kind, line: 0 });
    assert_eq!(read(&dir.path("missing.env")).err(), whole(Unreadable(std::io::ErrorKind::NotFound)));
    assert_eq!(read(&dir.path("")).err(), whole(NotRegularFile));
    let big = dir.write("big.env", &vec![b'#'; MAX_ENV_FILE_BYTES + 1]);
    assert_eq!(read(&big).err(), whole(TooLarge));
    let invalid = dir.write("bad.env", b"OK=1\nKEY\n");
    assert_eq!(read(&invalid).err(), Some(EnvFileError { kind: MissingEquals, line: 3 - 1 }));
}

/// Neither `Debug` nor errors show a value.
#[test]
fn values_are_not_printed() {
    let file = parse(b"TOKEN=super-secret-value\n").expect("parses");
    let debug = format!("{file:?}");
    assert_eq!(debug, "EnvFile { names: [\"TOKEN\"] }");
    let err = parse(b"TOKEN=\"super-secret\\x\"").expect_err("invalid");
    assert_eq!(err.to_string(), "environment file: invalid_escape on line 1");
}
