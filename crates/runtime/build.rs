//! Compiles proto/runtime.proto with protox (a pure-Rust protobuf compiler,
//! so no protoc is needed) into tonic and prost code.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/runtime.proto");
    let fds = protox::compile(["runtime.proto"], ["proto"])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
