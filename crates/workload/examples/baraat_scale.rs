//! Times the Baraat two-stage generator at the paper's scale: 10,000 tasks
//! of 1,230 flows (12.3 M flows) on the 36,000-host tree, then writing it
//! to native columns.
//!
//! ```text
//! cargo run --release -p coflowkit-workload --example baraat_scale [n_tasks]
//! ```

use coflowkit_model::FlowSpec;
use coflowkit_workload::baraat::{generate, BaraatConfig, Tree, Workflow};
use coflowkit_workload::FlowColumns;
use std::time::Instant;

fn main() {
    let n_tasks = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let config = BaraatConfig {
        n_tasks,
        ..BaraatConfig::default()
    };
    let start = Instant::now();
    let w = generate(&config);
    let generated = start.elapsed();
    let n_flows: usize = w.coflows.iter().map(|c| c.flows.len()).sum();
    let flow_bytes = n_flows * std::mem::size_of::<FlowSpec>();
    println!(
        "{} two-stage tasks, {n_flows} flows on {} hosts: generated in {:.2?} ({:.0} MB of FlowSpec at {} B each)",
        w.coflows.len(),
        w.n_hosts,
        generated,
        flow_bytes as f64 / 1e6,
        std::mem::size_of::<FlowSpec>()
    );
    let start = Instant::now();
    let load = Tree::default().offered_load(&w, Workflow::TwoStage);
    println!(
        "offered load {load:?} (computed in {:.2?})",
        start.elapsed()
    );
    let start = Instant::now();
    let cols = FlowColumns::from_workload(&w);
    println!(
        "native columns: {} rows in {:.2?}",
        cols.len(),
        start.elapsed()
    );
}
