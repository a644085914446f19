//! The one registry of workload generators: their names, presets and
//! parameters, and building a workload from a name and text parameters.
//!
//! This is what `coflowkit generate <workload> [--preset P] [--param
//! key=value ...]` and `coflowkit.generate(name, **params)` go through; Rust
//! code may as well call a generator module directly with its typed
//! configuration. Each entry makes a configuration from a preset (the first
//! preset is the default); parameters are then set by name ([`Params`]),
//! the configuration is validated, and the generator runs.

use crate::error::ConfigError;
use crate::params::{ParamDoc, ParamError, Params};
use crate::{baraat, dag, empirical, synth, tafe, waves};
use coflowkit_model::Workload;
use thiserror::Error;

/// A generator configuration the registry can drive.
pub trait Generator: Params + Send + Sync {
    /// Checks the configuration; the error names the field.
    fn check(&self) -> Result<(), ConfigError>;
    /// Generates the workload (the configuration is valid).
    fn run(&self) -> Workload;
}

/// Implements [`Generator`] for a configuration with `validate` and a
/// generating function.
macro_rules! generator {
    ($ty:ty, $generate:path) => {
        impl Generator for $ty {
            fn check(&self) -> Result<(), ConfigError> {
                self.validate()
            }
            fn run(&self) -> Workload {
                $generate(self)
            }
        }
    };
}

generator!(synth::SynthConfig, synth::generate);
generator!(baraat::BaraatConfig, baraat::generate);
generator!(empirical::EmpiricalConfig, empirical::generate);
generator!(dag::DagConfig, dag::generate);
generator!(waves::WavesConfig, waves::generate);
generator!(tafe::TafeConfig, tafe::generate);

/// A generator in the registry.
pub struct GeneratorInfo {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line on what it generates.
    pub about: &'static str,
    /// Where it comes from (paper and section).
    pub source: &'static str,
    /// Its presets, `(name, what it is)`; the first is the default.
    pub presets: &'static [(&'static str, &'static str)],
    /// The configuration of a preset (one of `presets`).
    make: fn(&str) -> Box<dyn Generator>,
}

/// Every generator, in help order.
pub const GENERATORS: &[GeneratorInfo] = &[
    GeneratorInfo {
        name: "coflow-benchmark",
        about: "synthetic coflows with the FB2010 trace's bin mix at a target load",
        source: "Aalo (SIGCOMM 2015) 7.1, Table 3; D-CAS V-A",
        presets: &[
            ("aalo", "52/16/15/17% SN/LN/SW/LW, short < 5 MiB, 50 hosts, 200 coflows (the embedded default)"),
            ("dcas", "D-CAS V-A: 80 hosts, 400 coflows, short < 10 MiB, flows <= 500 MiB, load 1"),
        ],
        make: |p| {
            Box::new(match p {
                "dcas" => synth::SynthConfig::dcas(),
                _ => synth::SynthConfig::aalo(),
            })
        },
    },
    GeneratorInfo {
        name: "baraat",
        about: "partition-aggregate, storage and data-parallel tasks on a 3-level tree",
        source: "Baraat (SIGCOMM 2014) 2.1, 5.1, 5.2",
        presets: &[
            ("two-stage", "30 mid aggregators x 40 workers + 30 mid->top flows per task (1,230 flows)"),
            ("single-stage", "an aggregator queries 40 workers of its rack (and the next)"),
            ("storage", "a client reads from 3 servers in parallel"),
            ("data-parallel", "a batch of 400 shuffle jobs, all at time 0"),
        ],
        make: |p| {
            Box::new(baraat::BaraatConfig {
                workflow: match p {
                    "single-stage" => baraat::Workflow::SingleStage,
                    "storage" => baraat::Workflow::Storage,
                    "data-parallel" => baraat::Workflow::DataParallel,
                    _ => baraat::Workflow::TwoStage,
                },
                n_tasks: if p == "data-parallel" { 400 } else { 10_000 },
                ..baraat::BaraatConfig::default()
            })
        },
    },
    GeneratorInfo {
        name: "websearch",
        about: "single-flow coflows with the DCTCP web-search flow sizes; Karuna flow types",
        source: "DCTCP (SIGCOMM 2010) via pFabric/PIAS CDF_dctcp.tcl; Karuna (SIGCOMM 2016) 2",
        presets: &[("default", "144 hosts, 10,000 flows, load 0.8, no deadlines")],
        make: |_| Box::new(empirical::EmpiricalConfig::websearch()),
    },
    GeneratorInfo {
        name: "datamining",
        about: "single-flow coflows with the VL2 data-mining flow sizes; Karuna flow types",
        source: "VL2 (SIGCOMM 2009) via pFabric/PIAS CDF_vl2.tcl; Karuna (SIGCOMM 2016) 2",
        presets: &[("default", "144 hosts, 10,000 flows, load 0.8, no deadlines")],
        make: |_| Box::new(empirical::EmpiricalConfig::datamining()),
    },
    GeneratorInfo {
        name: "dag",
        about: "multi-stage jobs as DAGs of coflows with Starts-After and Finishes-Before edges",
        source: "Aalo (SIGCOMM 2015) 5.1, Pseudocode 2, 7.4",
        presets: &[("default", "100 jobs of up to 3 levels x 3 coflows on 50 hosts")],
        make: |_| Box::new(dag::DagConfig::default()),
    },
    GeneratorInfo {
        name: "multi-wave",
        about: "coflow-benchmark coflows whose senders start in waves; restarted/speculative tasks",
        source: "Aalo (SIGCOMM 2015) 5.2, 7.3, Table 4",
        presets: &[("default", "the aalo coflows, at most 4 waves")],
        make: |_| Box::new(waves::WavesConfig::default()),
    },
    GeneratorInfo {
        name: "tafe",
        about: "tasks whose flows are CPU work then network, sent by 3 clients",
        source: "TAFE III (motivating example), V-B/V-C",
        presets: &[
            ("default", "3 clients, 100 tasks of 1-100 KB, 2 flows each"),
            ("motivating", "TAFE III: 2 tasks x 2 flows, 2 units of CPU then 2 of network, one CPU and one link"),
        ],
        make: |p| {
            Box::new(match p {
                "motivating" => tafe::TafeConfig::motivating(),
                _ => tafe::TafeConfig::default(),
            })
        },
    },
];

/// Why a generator could not be configured or run.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum GenerateError {
    /// No generator has this name.
    #[error("unknown workload {name:?} (workloads: {valid})")]
    UnknownGenerator {
        /// The name given.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// The generator has no such preset.
    #[error("{generator}: unknown preset {name:?} (presets: {valid})")]
    UnknownPreset {
        /// The generator.
        generator: &'static str,
        /// The preset given.
        name: String,
        /// Its presets, comma-separated.
        valid: String,
    },
    /// A parameter could not be set.
    #[error("{generator}: {err}")]
    Param {
        /// The generator.
        generator: &'static str,
        /// What was wrong.
        err: ParamError,
    },
    /// The configuration is not usable.
    #[error("{generator}: {err}")]
    Config {
        /// The generator.
        generator: &'static str,
        /// What was wrong.
        err: ConfigError,
    },
}

/// The generator called `name`.
pub fn find(name: &str) -> Result<&'static GeneratorInfo, GenerateError> {
    GENERATORS
        .iter()
        .find(|g| g.name == name)
        .ok_or_else(|| GenerateError::UnknownGenerator {
            name: name.to_string(),
            valid: GENERATORS
                .iter()
                .map(|g| g.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl GeneratorInfo {
    /// The configuration of `preset` (the default preset when `None`).
    pub fn preset(&self, preset: Option<&str>) -> Result<Box<dyn Generator>, GenerateError> {
        let name = match preset {
            None => self.presets[0].0,
            Some(p) => self
                .presets
                .iter()
                .find(|(n, _)| *n == p)
                .map(|(n, _)| *n)
                .ok_or_else(|| GenerateError::UnknownPreset {
                    generator: self.name,
                    name: p.to_string(),
                    valid: self
                        .presets
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?,
        };
        Ok((self.make)(name))
    }

    /// The parameters of `preset`, with their values there.
    pub fn describe(&self, preset: Option<&str>) -> Result<Vec<ParamDoc>, GenerateError> {
        Ok(self.preset(preset)?.describe())
    }

    /// The checked configuration of `preset` with `params` (name, text) set
    /// in order.
    pub fn configure(
        &self,
        preset: Option<&str>,
        params: &[(&str, &str)],
    ) -> Result<Box<dyn Generator>, GenerateError> {
        let mut config = self.preset(preset)?;
        for &(name, text) in params {
            config
                .set_param(name, text)
                .map_err(|err| GenerateError::Param {
                    generator: self.name,
                    err,
                })?;
        }
        config.check().map_err(|err| GenerateError::Config {
            generator: self.name,
            err,
        })?;
        Ok(config)
    }
}

/// Generates workload `name` from `preset` with `params` set.
pub fn generate_named(
    name: &str,
    preset: Option<&str>,
    params: &[(&str, &str)],
) -> Result<Workload, GenerateError> {
    Ok(find(name)?.configure(preset, params)?.run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_presets_and_params_are_checked() {
        assert_eq!(
            generate_named("bogus", None, &[]).unwrap_err().to_string(),
            "unknown workload \"bogus\" (workloads: coflow-benchmark, baraat, websearch, datamining, dag, multi-wave, tafe)"
        );
        assert_eq!(
            generate_named("coflow-benchmark", Some("fb"), &[])
                .unwrap_err()
                .to_string(),
            "coflow-benchmark: unknown preset \"fb\" (presets: aalo, dcas)"
        );
        let e = generate_named("coflow-benchmark", None, &[("n_flows", "3")]).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "coflow-benchmark: unknown parameter \"n_flows\" (valid: n_hosts, n_coflows, load,"
            ),
            "{e}"
        );
        assert_eq!(
            generate_named("coflow-benchmark", None, &[("load", "x")])
                .unwrap_err()
                .to_string(),
            "coflow-benchmark: load: \"x\" is not a number"
        );
        assert_eq!(
            generate_named("coflow-benchmark", None, &[("load", "0")])
                .unwrap_err()
                .to_string(),
            "coflow-benchmark: load: must be a positive finite number, got 0"
        );
    }

    #[test]
    fn the_aalo_preset_is_the_embedded_default() {
        let w = generate_named("coflow-benchmark", Some("aalo"), &[]).unwrap();
        assert_eq!(w, synth::generate(&synth::SynthConfig::default()));
        let w = generate_named(
            "coflow-benchmark",
            None,
            &[("n_coflows", "12"), ("seed", "3")],
        )
        .unwrap();
        assert_eq!(
            w,
            synth::generate(&synth::SynthConfig {
                n_coflows: 12,
                seed: 3,
                ..synth::SynthConfig::default()
            })
        );
    }

    #[test]
    fn every_generator_describes_its_parameters_and_they_set() {
        for g in GENERATORS {
            for &(preset, _) in g.presets {
                let docs = g.describe(Some(preset)).unwrap();
                let names = g.preset(Some(preset)).unwrap().param_names();
                assert_eq!(docs.len(), names.len(), "{}", g.name);
                assert!(names.contains(&"seed"), "{} has no seed", g.name);
                // Setting every parameter to its shown value changes nothing.
                let pairs: Vec<(&str, &str)> =
                    docs.iter().map(|d| (d.name, d.value.as_str())).collect();
                let config = g.configure(Some(preset), &pairs).unwrap();
                assert_eq!(config.describe(), docs, "{} {preset}", g.name);
            }
        }
    }
}
