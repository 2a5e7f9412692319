//! The command line of `ptc` (lifecycle.md §1): parsing only, no file is read here.
//!
//! Parsing is total: every argument vector maps to exactly one `Invocation`. A subcommand given no
//! argument at all is answered with the usage text (lifecycle.md §1.1–§1.6: a person who typed the bare
//! command wants to know what to type next, not a startup code); any other usage error of `ptc gateway` is
//! the startup code `config_invalid` (stage 0); `--help` and `--version` win over every other check
//! (lifecycle.md §1.1).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::paths;
use crate::config::Mode;

/// What the process was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// `--help` / `-h`: usage on stdout, exit 0.
    Help,
    /// `--version` / `-V`: `ptc <version>` on stdout, exit 0.
    Version,
    /// `ptc gateway …` with valid arguments.
    Gateway(GatewayArgs),
    /// `ptc gateway …` with invalid arguments: `config_invalid` (stage 0).
    GatewayUsageError,
    /// `ptc pin …` with valid arguments (lifecycle.md §1.3); `mode` is discovery.
    Pin(GatewayArgs),
    /// `ptc pin …` with invalid arguments: `config_invalid`, as for `ptc gateway`.
    PinUsageError,
    /// `ptc check …` with valid arguments (lifecycle.md §1.5); `mode` is serve.
    Check(GatewayArgs),
    /// `ptc check …` with invalid arguments: explained as `config_invalid` at stage 0.
    CheckUsageError,
    /// `ptc call …`.
    Call(Vec<OsString>),
    /// `ptc list …` (lifecycle.md §1.4); its arguments are checked by the client.
    List(Vec<OsString>),
    /// `ptc replay …` (replay.md §1); its arguments are checked by the command.
    Replay(Vec<OsString>),
    /// No subcommand, an unknown one, or a subcommand without any argument: usage on stderr, exit 2.
    Usage,
}

/// The arguments of `ptc gateway`, both paths already anchored at the invocation directory (config.md §3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayArgs {
    pub config: PathBuf,
    pub env_file: Option<PathBuf>,
    pub mode: Mode,
}

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
Usage:
  ptc gateway CONFIG [--env-file FILE] [--print-pins]
  ptc pin CONFIG [--env-file FILE]
  ptc check CONFIG [--env-file FILE]
  ptc call ENDPOINT TOOL [--arguments JSON]
  ptc list ENDPOINT [--json]
  ptc replay CONFIG PATH… [--env-file FILE] [--json]
  ptc --help | --version

ptc gateway serves the tools of the gateway document CONFIG on its loopback listener.
  --env-file FILE  read credentials' environment variables from FILE as well (once, at startup)
  --print-pins     acquire every provider, print every tool's pins as JSON, and exit

ptc pin runs the same discovery as --print-pins and writes every tool's three pin members into CONFIG
(atomically, keeping its layout and mode), printing one line per changed member.

ptc check runs every startup stage that binds no port and creates nothing (providers are started and
stopped again) and explains the first refusal: code, stage, document, key, tool, digests. Exit 0 when
serving would start, 78 otherwise.

ptc call performs one stateless tools/call against a running gateway on loopback, with the bearer
token from PTC_GATEWAY_TOKEN, and prints the structuredContent on stdout.
  --arguments JSON the tool's arguments, a JSON object (default {})

ptc list prints the tools a running gateway serves (name, read or write, title, description), with the
same token; --json prints the raw tools/list result.

ptc replay runs recorded traces (files, or directories of them) again against the tools as CONFIG now
pins them, with every upstream and model call answered from the trace: no port, no upstream process, no
connection, no credential. It prints each run that is not the same and a summary; --json prints one
object. Exit 0 when every run is the same, 1 otherwise, 2 usage, 78 when CONFIG does not load.

Exit status of ptc gateway: 0 clean exit, 70 unclean shutdown or abnormal stop, 78 startup failure
(stderr then holds exactly one line {\"error\":\"<code>\"}).
Exit status of ptc call: 0 success, 1 the tool returned an error, 2 any other failure; of ptc list: 0 or 2.
";

/// Parses `args` (without the program name). `cwd` is the invocation directory.
pub fn parse(args: &[OsString], cwd: &Path) -> Invocation {
    // lifecycle.md §1.1: `--help` or `--version` anywhere wins over every other argument check. Only
    // arguments before a `--` are options; after it, `--help` is a (bad) positional.
    for arg in args.iter().take_while(|a| a.as_os_str() != "--") {
        if arg == "--help" || arg == "-h" {
            return Invocation::Help;
        }
        if arg == "--version" || arg == "-V" {
            return Invocation::Version;
        }
    }
    let Some((subcommand, rest)) = args.split_first() else {
        return Invocation::Usage;
    };
    if rest.is_empty() {
        // The bare subcommand (or an unknown word): every subcommand needs at least one argument.
        return Invocation::Usage;
    }
    if subcommand == "gateway" {
        match parse_gateway(rest, cwd) {
            Some(gateway) => Invocation::Gateway(gateway),
            None => Invocation::GatewayUsageError,
        }
    } else if subcommand == "pin" {
        // lifecycle.md §1.3: the arguments of `ptc gateway` without `--print-pins`.
        match parse_gateway(rest, cwd) {
            Some(args) if args.mode == Mode::Serve => {
                Invocation::Pin(GatewayArgs { mode: Mode::Discovery, ..args })
            }
            _ => Invocation::PinUsageError,
        }
    } else if subcommand == "check" {
        // lifecycle.md §1.5: the arguments of `ptc gateway` without `--print-pins`.
        match parse_gateway(rest, cwd) {
            Some(args) if args.mode == Mode::Serve => Invocation::Check(args),
            _ => Invocation::CheckUsageError,
        }
    } else if subcommand == "call" {
        Invocation::Call(rest.to_vec())
    } else if subcommand == "list" {
        Invocation::List(rest.to_vec())
    } else if subcommand == "replay" {
        Invocation::Replay(rest.to_vec())
    } else {
        Invocation::Usage
    }
}

/// lifecycle.md §1.1: one positional `CONFIG`, `--env-file FILE` / `--env-file=FILE` at most once with a
/// non-empty value, `--print-pins` at most once without a value, any order, `--` ends options.
fn parse_gateway(args: &[OsString], cwd: &Path) -> Option<GatewayArgs> {
    let mut print_pins = false;
    let scanned = scan(args, |option| match option {
        "--print-pins" if !print_pins => {
            print_pins = true;
            true
        }
        _ => false,
    })?;
    let [config] = scanned.positional.as_slice() else { return None };
    Some(GatewayArgs {
        config: paths::anchor(config, cwd),
        env_file: scanned.env_file.map(|p| paths::anchor(&p, cwd)),
        mode: if print_pins { Mode::Discovery } else { Mode::Serve },
    })
}

/// What [`scan`] found: the positional arguments in order, and `--env-file`'s value (neither anchored).
pub(crate) struct Scanned {
    pub positional: Vec<PathBuf>,
    pub env_file: Option<PathBuf>,
}

/// The option grammar every command taking `--env-file` shares (lifecycle.md §1.1, replay.md §1): options
/// and positional arguments in any order, `--` ends options, a positional argument is not empty,
/// `--env-file FILE` / `--env-file=FILE` at most once with a non-empty value. Every other option is offered
/// to `option`, which accepts it (true) or refuses it; a refused or non-UTF-8 option is a usage error
/// (`None`), as is a missing `--env-file` value.
pub(crate) fn scan(args: &[OsString], mut option: impl FnMut(&str) -> bool) -> Option<Scanned> {
    let mut scanned = Scanned { positional: Vec::new(), env_file: None };
    let mut options_done = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_str();
        if !options_done && text == Some("--") {
            options_done = true;
            continue;
        }
        let is_option = !options_done && arg.as_encoded_bytes().starts_with(b"-") && arg.len() > 1;
        if !is_option {
            if arg.is_empty() {
                return None;
            }
            scanned.positional.push(PathBuf::from(arg));
            continue;
        }
        let env_file = match text? {
            "--env-file" => iter.next()?.to_os_string(),
            t if t.starts_with("--env-file=") => OsString::from(&t["--env-file=".len()..]),
            other if option(other) => continue,
            // An unknown option, a repeated one, or one given a value it does not take.
            _ => return None,
        };
        if env_file.is_empty() || scanned.env_file.is_some() {
            return None;
        }
        scanned.env_file = Some(PathBuf::from(env_file));
    }
    Some(scanned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn check(config: &str, env_file: Option<&str>) -> Invocation {
        match gateway(config, env_file, Mode::Serve) {
            Invocation::Gateway(args) => Invocation::Check(args),
            other => other,
        }
    }

    fn gateway(config: &str, env_file: Option<&str>, mode: Mode) -> Invocation {
        Invocation::Gateway(GatewayArgs {
            config: PathBuf::from(config),
            env_file: env_file.map(PathBuf::from),
            mode,
        })
    }

    #[test]
    fn vectors() {
        let cwd = Path::new("/srv/ptc");
        let cases: &[(&[&str], Invocation)] = &[
            (&["gateway", "g.json"], gateway("/srv/ptc/g.json", None, Mode::Serve)),
            (&["gateway", "/etc/g.json"], gateway("/etc/g.json", None, Mode::Serve)),
            (&["gateway", "--print-pins", "g.json"], gateway("/srv/ptc/g.json", None, Mode::Discovery)),
            (
                &["gateway", "g.json", "--env-file", "e.env"],
                gateway("/srv/ptc/g.json", Some("/srv/ptc/e.env"), Mode::Serve),
            ),
            (
                &["gateway", "--env-file=../e.env", "./g.json"],
                gateway("/srv/ptc/g.json", Some("/srv/e.env"), Mode::Serve),
            ),
            (&["gateway", "--", "-g.json"], gateway("/srv/ptc/-g.json", None, Mode::Serve)),
            (&["gateway"], Invocation::Usage),
            (&["gateway", "--env-file", "e.env"], Invocation::GatewayUsageError),
            (&["call"], Invocation::Usage),
            (&["list"], Invocation::Usage),
            (&["replay"], Invocation::Usage),
            (&["replay", "g.json"], Invocation::Replay(args(&["g.json"]))),
            (&["call", "x"], Invocation::Call(args(&["x"]))),
            (&["list", "--json"], Invocation::List(args(&["--json"]))),
            (&["gateway", "a.json", "b.json"], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--verbose"], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--env-file", "a", "--env-file", "b"], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--env-file=a", "--env-file=b"], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--env-file"], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--env-file="], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--env-file", ""], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--print-pins", "--print-pins"], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--print-pins=yes"], Invocation::GatewayUsageError),
            (&["gateway", ""], Invocation::GatewayUsageError),
            (&["gateway", "g.json", "--verbose", "--help"], Invocation::Help),
            (&["gateway", "-V"], Invocation::Version),
            (&["--version"], Invocation::Version),
            (&["-h"], Invocation::Help),
            (&[], Invocation::Usage),
            (&["serve"], Invocation::Usage),
            (&["serve", "g.json"], Invocation::Usage),
            (&["gateway", "--", "--help"], gateway("/srv/ptc/--help", None, Mode::Serve)),
            (
                &["pin", "g.json", "--env-file", "e.env"],
                Invocation::Pin(GatewayArgs {
                    config: PathBuf::from("/srv/ptc/g.json"),
                    env_file: Some(PathBuf::from("/srv/ptc/e.env")),
                    mode: Mode::Discovery,
                }),
            ),
            (&["pin"], Invocation::Usage),
            (&["pin", "--env-file=e.env"], Invocation::PinUsageError),
            (&["check", "g.json"], check("/srv/ptc/g.json", None)),
            (&["check", "--env-file=e.env", "g.json"], check("/srv/ptc/g.json", Some("/srv/ptc/e.env"))),
            (&["check"], Invocation::Usage),
            (&["check", "--env-file=e.env"], Invocation::CheckUsageError),
            (&["check", "g.json", "--print-pins"], Invocation::CheckUsageError),
            (&["check", "a.json", "b.json"], Invocation::CheckUsageError),
            (&["pin", "g.json", "--print-pins"], Invocation::PinUsageError),
            (&["pin", "a.json", "b.json"], Invocation::PinUsageError),
        ];
        for (argv, expected) in cases {
            assert_eq!(&parse(&args(argv), cwd), expected, "argv {argv:?}");
        }
    }
}
