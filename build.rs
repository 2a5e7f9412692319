//! Generates the PCC tool gateway service (pcc.md §2) from `schemas/pcc_tool_gateway.proto` at build
//! time, with the vendored `protoc` so that no system protoc is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // prost-build finds protoc through PROTOC; set in the build script process only.
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed=schemas/pcc_tool_gateway.proto");
    // The server for the gateway and the client for the black-box tests (tests/pcc_front.rs).
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_protos(&["schemas/pcc_tool_gateway.proto"], &["schemas"])?;
    Ok(())
}
