//! `docs/tutorial.md` runs as written (issue 17, scope 4): every ```sh block, in order, in one bash shell
//! started at the repository root, and each ```text block that follows a ```sh block is that block's exact
//! stdout. The ```sh setup block (build `ptc`, install the filesystem server) is the test's own: the binary
//! under test is put on `PATH`, and `tests/third_party/install.sh` has installed the server. The port of
//! the tutorial is replaced by a free one; `mktemp` works in a directory the test removes; every process the
//! script started is killed with its process group at the end.

use crate::support;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One fenced block of the tutorial.
#[derive(Debug)]
enum Block {
    /// Commands to run.
    Run(String),
    /// The exact stdout of the preceding `Run` block.
    Output(String),
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let kind = match line {
            "```sh" => Some(true),
            "```text" => Some(false),
            _ => None,
        };
        let skip = line == "```sh setup";
        if kind.is_none() && !skip {
            continue;
        }
        let mut body = String::new();
        for line in lines.by_ref() {
            if line == "```" {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        match kind {
            Some(true) => out.push(Block::Run(body)),
            Some(false) => out.push(Block::Output(body)),
            None => {}
        }
    }
    out
}

#[test]
fn the_tutorial_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server =
        root.join("config-examples/published-briefs/node_modules/@modelcontextprotocol/server-filesystem");
    assert!(server.is_dir(), "the filesystem server is missing: run `bash tests/third_party/install.sh`");
    let markdown = std::fs::read_to_string(root.join("docs/tutorial.md")).expect("docs/tutorial.md");
    let port = support::free_port("127.0.0.1").to_string();
    let blocks = blocks(&markdown);
    let outputs = tempfile::tempdir().expect("tempdir");
    let scratch = tempfile::tempdir().expect("tempdir");
    let mut script = String::new();
    let mut expected = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block {
            Block::Run(commands) => {
                let file = outputs.path().join(format!("{i}.out"));
                script.push_str(&format!(
                    "{{\n{}}} > '{}'\n",
                    commands.replace("8790", &port),
                    file.display()
                ));
            }
            Block::Output(text) => {
                let file = outputs.path().join(format!("{}.out", i - 1));
                assert!(
                    matches!(blocks.get(i - 1), Some(Block::Run(_))),
                    "block {i}: output follows commands"
                );
                expected.push((file, text.clone()));
            }
        }
    }
    assert!(expected.len() >= 7, "the tutorial shows its outputs");
    let bin = Path::new(env!("CARGO_BIN_EXE_ptc")).parent().expect("bin dir");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail", "-c", &script])
        .current_dir(root)
        .env("PATH", path)
        .env("TMPDIR", scratch.path())
        .env_remove("PTC_GATEWAY_TOKEN")
        .env_remove("TUTORIAL_TOKEN")
        .env_remove("PTC_LOG")
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .process_group(0);
    // stderr goes to a file, not a pipe: a process the script left behind must not hold the test's pipe.
    let stderr_path = outputs.path().join("stderr");
    let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
    let mut child = cmd.stdout(Stdio::null()).stderr(stderr).spawn().expect("bash");
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(180) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Whatever the script left running (a gateway after a failed step, its upstream) goes with its group.
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let status =
        status.unwrap_or_else(|| panic!("the tutorial did not finish within 180 s; stderr: {stderr}"));
    assert_eq!(status.code(), Some(0), "the tutorial failed: {stderr}");
    for (file, text) in expected {
        let got = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(got, text, "the output shown after the commands of {}", file.display());
    }
}
