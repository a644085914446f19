//! With the `server` feature: compiles proto/runtime.proto with protox (a
//! pure-Rust protobuf compiler, so no protoc is needed) into the prost
//! messages and the tonic service the agent and the coordinator speak, and
//! the messages alone into `OUT_DIR/messages/`, which a unit test compares
//! with the checked-in `src/proto_messages.rs`.
//!
//! Without it (the client library alone, as the Python extension builds
//! it) nothing is generated: the crate uses `src/proto_messages.rs`, so the
//! extension needs neither protox nor prost-build (45 crates, about as much
//! build time as the rest of the extension).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "server")]
    server()?;
    Ok(())
}

#[cfg(feature = "server")]
fn server() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/runtime.proto");
    let fds = protox::compile(["runtime.proto"], ["proto"])?;
    tonic_prost_build::configure().compile_fds(fds.clone())?;
    let messages = std::path::PathBuf::from(std::env::var("OUT_DIR")?).join("messages");
    std::fs::create_dir_all(&messages)?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(false)
        .out_dir(&messages)
        .compile_fds(fds)?;
    Ok(())
}
