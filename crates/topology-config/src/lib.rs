//! Topology configs for coflowkit: the `--topology` spec strings of the
//! CLI and TOML/YAML files, read into a [`TopologyConfig`] and built into a
//! [`Fabric`](coflowkit_model::Fabric).
//!
//! The builders themselves (and what each topology is) live in
//! [`coflowkit_model::topology`]; this crate only reads what people write,
//! so that the model crate stays free of parsers:
//!
//! - [`parse_spec`] reads spec strings such as
//!   `tree:pods=30,racks=30,hosts=40,tor_oversub=2,rate=1Gbps`,
//!   `fat-tree:k=8`, `leaf-spine:leaves=4,spines=2,hosts=8`, `bigswitch`;
//! - [`load_file`], [`parse_toml`] and [`parse_yaml`] read a file with
//!   `kind = ...` and the same keys, or `[[node]]`/`[[link]]` lists for a
//!   custom graph;
//! - [`resolve`] does either, by whether the argument ends in `.toml`,
//!   `.yaml` or `.yml`;
//! - [`parse_rate`] reads `1Gbps`, `10 Gbit/s`, or a number of bit/s;
//! - [`FabricInfo`] is what `coflowkit topology info` prints.
//!
//! Every front door goes through one generic tree (see `raw`) and one table
//! reader, so a spec string and a file take the same keys, and every error
//! names the file (or spec), the key or element, and the problem:
//! `topo.toml: link 3 (tor0 -> agg9): unknown node agg9`. No input makes
//! a reader panic (property tests).

#![warn(missing_docs)]

mod config;
mod error;
mod info;
mod rate;
mod raw;

pub use config::{
    is_file_spec, load_file, parse_kind, parse_spec, parse_toml, parse_yaml, resolve,
    TopologyConfig,
};
pub use error::TopologyError;
pub use info::{FabricInfo, LinkGroup};
pub use rate::{format_rate, parse_rate};
