//! What the decomposed engine's tests share.

use coflowkit_decomposed::{simulate, DecomposedResult, Options, Run};
use coflowkit_model::{Fabric, ValidWorkload};
use coflowkit_packet::PacketConfig;

/// A decomposed run of `w` on `fabric` with the default knobs and
/// transport, the decomposition's options `opts`, on `threads` threads.
pub fn run(fabric: &Fabric, w: &ValidWorkload, opts: &str, threads: usize) -> DecomposedResult {
    let mut o = Options {
        threads,
        ..Options::default()
    };
    o.set(opts).unwrap();
    simulate(
        fabric,
        w,
        &Run::Transport,
        &[],
        &PacketConfig::default(),
        o,
        &mut |_, _| {},
    )
    .unwrap()
}
