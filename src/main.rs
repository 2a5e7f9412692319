#![forbid(unsafe_code)]
//! `ptc`: the command-line shell over the `ptc_gateway` library; all behaviour lives in the library
//! (`ptc_gateway::main`, lifecycle.md §1–§2).

fn main() -> std::process::ExitCode {
    ptc_gateway::main()
}
