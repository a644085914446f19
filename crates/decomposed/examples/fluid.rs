//! The fluid view of a whole fabric's flows alone: its time, incremental
//! (`fluid::run`, what a decomposed run uses) or from scratch at every event
//! (`fluid::run_reference`, the slow reference), for the benchmarks.
//!
//! `fluid TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS] [reference]`; prints the
//! flows, the time it took (routing excluded) and a checksum of the fluid
//! completion times, which the two forms share to within their rounding.

mod common;

use coflowkit_decomposed::{fluid, route};
use coflowkit_model::Time;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let common::Case {
        fabric, workload, ..
    } = common::case(&a);
    let reference = a.get(5).map(String::as_str) == Some("reference");
    let routes = route::route(&fabric, &workload, &[]);
    let (mut bytes, mut start) = (vec![], vec![]);
    for c in workload.coflows() {
        for f in &c.flows {
            bytes.push(f.bytes.0);
            start.push(Time(c.arrival.0 + f.delay.0));
        }
    }
    let t = Instant::now();
    let fl = if reference {
        fluid::run_reference(&fabric, &routes.paths, &bytes, &start)
    } else {
        fluid::run(&fabric, &routes.paths, &bytes, &start)
    };
    let took = t.elapsed().as_secs_f64();
    let mean_us = fl.fct.iter().sum::<u64>() as f64 / fl.fct.len().max(1) as f64 / 1e3;
    println!(
        "{} flows, {}: {took:.2} s; mean fluid FCT {mean_us:.3} us",
        bytes.len(),
        if reference {
            "from scratch"
        } else {
            "incremental"
        },
    );
}
