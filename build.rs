//! Generates the PCC tool gateway service (pcc.md §2) from `schemas/pcc_tool_gateway.proto` at build
//! time, with the vendored `protoc` so that no system protoc is needed.
//!
//! Two views of the one normative file are generated:
//! - `normative/`: the file as written (messages and a client), for callers such as the black-box tests;
//! - `served/`: the server's decoding view, identical except that `request_body` is `bytes`. A `bytes`
//!   field with the same number is wire-identical to `string` (both are length-delimited, wire type 2),
//!   but prost refuses a non-UTF-8 `string` before the front sees it, while pcc.md §5.2 requires the
//!   front to answer such a body with `-32700` on the open stream (docs/decisions.md, the PCC front).

use std::path::PathBuf;

const SCHEMA: &str = "schemas/pcc_tool_gateway.proto";
const STRING_FIELD: &str = "string request_body = 2;";
const BYTES_FIELD: &str = "bytes request_body = 2;";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    pack_relative_relocations();
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // prost-build finds protoc through PROTOC; set in the build script process only.
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed={SCHEMA}");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);

    let normative = out.join("normative");
    std::fs::create_dir_all(&normative)?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .out_dir(&normative)
        .compile_protos(&[SCHEMA], &["schemas"])?;

    let text = std::fs::read_to_string(SCHEMA)?;
    if text.matches(STRING_FIELD).count() != 1 {
        return Err(format!("{SCHEMA}: expected exactly one `{STRING_FIELD}`").into());
    }
    let schema_dir = out.join("served_schema");
    std::fs::create_dir_all(&schema_dir)?;
    let served_schema = schema_dir.join("pcc_tool_gateway.proto");
    std::fs::write(&served_schema, text.replace(STRING_FIELD, BYTES_FIELD))?;
    let served = out.join("served");
    std::fs::create_dir_all(&served)?;
    // The client of this view lets the tests send a body that is not UTF-8.
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .out_dir(&served)
        .compile_protos(&[served_schema], &[schema_dir])?;
    Ok(())
}

/// The `ptc` binary's relative relocations packed as RELR instead of one 24-byte `Elf64_Rela` each: the
/// dynamic loader reads the whole relocation table at every start and its pages stay resident, about
/// 0.5 MiB of the idle gateway for the 23,000 pointers a position-independent executable relocates
/// (docs/decisions.md "The quickstart's idle memory (issue 27)"). The binary stays position-independent;
/// glibc applies RELR since 2.36, and the linker marks the binary as needing it. Only the binary: test and
/// bench binaries measure nothing that depends on it.
fn pack_relative_relocations() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
