//! Topology configs: what a spec string or a TOML/YAML file says, checked,
//! and how it is written back.
//!
//! Keys (a spec string and a file use the same ones; aliases in brackets):
//!
//! | kind | keys (defaults) |
//! |---|---|
//! | `bigswitch` | `hosts` (the workload's), `host_rate` [`rate`] (1 Gbit/s) |
//! | `tree` | `pods` (30), `racks_per_pod` [`racks`] (30), `hosts_per_rack` [`hosts`] (40), `host_rate` [`rate`] (1 Gbit/s), `tor_oversub` (2), `agg_oversub` (1) |
//! | `leaf-spine` | `leaves` (4), `spines` (2), `hosts_per_leaf` [`hosts`] (8), `host_rate` [`rate`] (1 Gbit/s), `spine_rate` (oversubscription 1) |
//! | `fat-tree` | `k` (4), `link_rate` [`rate`] (1 Gbit/s) |
//! | `custom` | `node` [`nodes`]: list of `name`, `kind` (`host` or `switch`); `link` [`links`]: list of `from`, `to`, `capacity` [`rate`], `duplex` (true) |
//! | all | `cpu_rate` (no CPUs), `ecmp_seed` (0); a file also has `kind` |
//!
//! Rates are strings with a unit (`"10 Gbit/s"`, see [`crate::parse_rate`])
//! or numbers in bit/s. Unknown keys are errors (a typo must not silently
//! fall back to a default).

use crate::rate::format_rate;
use crate::raw::{Raw, Table};
use crate::TopologyError;
use coflowkit_model::{
    BigSwitchSpec, BitsPerSec, CustomSpec, Fabric, FatTreeSpec, LeafSpineSpec, LinkSpec, NodeKind,
    NodeSpec, Topology, TopologyKind, TreeSpec,
};
use std::fmt::Write as _;
use std::path::Path;

/// A topology as a config describes it, checked for types and keys; its
/// fabric is checked when built ([`TopologyConfig::build`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TopologyConfig {
    /// Where it came from (a path, or `topology '<spec>'`), for messages.
    pub source: String,
    /// The topology. A big switch without `hosts` has 0 hosts here, filled
    /// in from the workload at build time (see `sized_by_workload`).
    pub topology: Topology,
    /// Whether the big switch takes its host count from the workload.
    pub sized_by_workload: bool,
    /// A CPU resource of this rate on every host, if given.
    pub cpu_rate: Option<BitsPerSec>,
    /// The ECMP seed.
    pub ecmp_seed: u64,
}

/// The kind named by `s` (`bigswitch`, `tree`, `leaf-spine`, `fat-tree`,
/// `custom`; any case, `_` for `-`, and `big-switch`, `leafspine`,
/// `fattree` too).
pub fn parse_kind(s: &str) -> Option<TopologyKind> {
    match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "bigswitch" | "big-switch" => Some(TopologyKind::BigSwitch),
        "tree" => Some(TopologyKind::Tree),
        "leaf-spine" | "leafspine" => Some(TopologyKind::LeafSpine),
        "fat-tree" | "fattree" => Some(TopologyKind::FatTree),
        "custom" => Some(TopologyKind::Custom),
        _ => None,
    }
}

const KINDS: &str = "bigswitch, tree, leaf-spine, fat-tree, custom";

/// Whether a spec names a config file (ends in `.toml`, `.yaml` or `.yml`).
pub fn is_file_spec(spec: &str) -> bool {
    let s = spec.trim().to_ascii_lowercase();
    [".toml", ".yaml", ".yml"].iter().any(|e| s.ends_with(e))
}

/// A `--topology` argument: a path to a `.toml`/`.yaml`/`.yml` file, or a
/// spec string (see [`parse_spec`]).
pub fn resolve(spec: &str) -> Result<TopologyConfig, TopologyError> {
    if is_file_spec(spec) {
        load_file(Path::new(spec.trim()))
    } else {
        parse_spec(spec)
    }
}

/// Parses a spec string: `KIND[:KEY=VALUE,KEY=VALUE,...]`, e.g.
/// `tree:pods=30,racks=30,hosts=40,tor_oversub=2,rate=1Gbps`,
/// `fat-tree:k=8`, `leaf-spine:leaves=4,spines=2,hosts=8`, `bigswitch`.
/// Custom graphs come only from files.
pub fn parse_spec(spec: &str) -> Result<TopologyConfig, TopologyError> {
    let spec = spec.trim();
    let at = format!("topology '{spec}'");
    let (kind_text, params) = match spec.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (spec, None),
    };
    let kind = match parse_kind(kind_text) {
        Some(TopologyKind::Custom) => {
            return Err(TopologyError::Spec {
                at,
                message: "a custom graph comes from a .toml or .yaml file".into(),
            })
        }
        Some(k) => k,
        None => {
            return Err(TopologyError::Spec {
                message: format!(
                    "unknown kind '{}' (one of {KINDS}, or a .toml/.yaml file)",
                    kind_text.trim()
                ),
                at,
            })
        }
    };
    let mut entries = vec![];
    for item in params.unwrap_or("").split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let Some((k, v)) = item.split_once('=') else {
            return Err(TopologyError::Spec {
                at,
                message: format!("'{item}' is not key=value"),
            });
        };
        entries.push((k.trim().to_string(), Raw::Str(v.trim().to_string())));
    }
    let mut t = Table::new(&at, String::new(), Raw::Map(entries))?;
    from_table(&at, kind, &mut t).and_then(|c| t.finish(&format!("a {}", kind.name())).map(|_| c))
}

/// Reads a config file: TOML for `.toml`, YAML for `.yaml`/`.yml`.
pub fn load_file(path: &Path) -> Result<TopologyConfig, TopologyError> {
    let name = path.display().to_string();
    let lower = name.to_ascii_lowercase();
    if !is_file_spec(&lower) {
        return Err(TopologyError::Spec {
            at: name,
            message: "a topology file ends in .toml, .yaml or .yml".into(),
        });
    }
    let bytes = std::fs::read(path).map_err(|err| TopologyError::Io {
        path: name.clone(),
        err,
    })?;
    let text = String::from_utf8(bytes).map_err(|_| TopologyError::Spec {
        at: name.clone(),
        message: "is not valid UTF-8".into(),
    })?;
    if lower.ends_with(".toml") {
        parse_toml(&text, &name)
    } else {
        parse_yaml(&text, &name)
    }
}

/// Parses TOML text; `name` is what messages call it.
pub fn parse_toml(text: &str, name: &str) -> Result<TopologyConfig, TopologyError> {
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map_or((0, 0), |s| line_column(text, s.start));
        TopologyError::Syntax {
            at: name.to_string(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })?;
    from_document(name, raw)
}

/// Parses YAML text; `name` is what messages call it.
pub fn parse_yaml(text: &str, name: &str) -> Result<TopologyConfig, TopologyError> {
    let raw: Raw = serde_saphyr::from_str(text).map_err(|e| {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        let message = e.without_snippet().to_string();
        let suffix = format!(" at line {line}, column {column}");
        let message = message.strip_suffix(&suffix).unwrap_or(&message);
        TopologyError::Syntax {
            at: name.to_string(),
            line,
            column,
            message: message.trim().to_string(),
        }
    })?;
    from_document(name, raw)
}

/// 1-based line and column of byte `at` in `text`.
fn line_column(text: &str, at: usize) -> (u64, u64) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() as u64 + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64 + 1;
    (line, column)
}

/// A whole file's table: `kind` first, then the kind's keys.
fn from_document(at: &str, raw: Raw) -> Result<TopologyConfig, TopologyError> {
    let mut t = Table::new(at, String::new(), raw)?;
    let kind_text = t
        .string(&["kind"])?
        .ok_or_else(|| t.error("kind", format!("missing (one of {KINDS})")))?;
    let kind = parse_kind(&kind_text).ok_or_else(|| {
        t.error(
            "kind",
            format!("unknown kind '{kind_text}' (one of {KINDS})"),
        )
    })?;
    let c = from_table(at, kind, &mut t)?;
    t.finish(&format!("a {}", kind.name()))?;
    Ok(c)
}

/// The keys of `kind` and the common ones, taken from `t`.
fn from_table(
    at: &str,
    kind: TopologyKind,
    t: &mut Table<'_>,
) -> Result<TopologyConfig, TopologyError> {
    let mut sized_by_workload = false;
    let topology = match kind {
        TopologyKind::BigSwitch => {
            let hosts = t.count(&["hosts"])?;
            sized_by_workload = hosts.is_none();
            Topology::BigSwitch(BigSwitchSpec {
                hosts: hosts.unwrap_or(0),
                host_rate: t.rate(&["host_rate", "rate"])?.unwrap_or(BitsPerSec::GBPS),
            })
        }
        TopologyKind::Tree => {
            let d = TreeSpec::default();
            Topology::Tree(TreeSpec {
                pods: t.count(&["pods"])?.unwrap_or(d.pods),
                racks_per_pod: t
                    .count(&["racks_per_pod", "racks"])?
                    .unwrap_or(d.racks_per_pod),
                hosts_per_rack: t
                    .count(&["hosts_per_rack", "hosts"])?
                    .unwrap_or(d.hosts_per_rack),
                host_rate: t.rate(&["host_rate", "rate"])?.unwrap_or(d.host_rate),
                tor_oversub: t.number(&["tor_oversub"])?.unwrap_or(d.tor_oversub),
                agg_oversub: t.number(&["agg_oversub"])?.unwrap_or(d.agg_oversub),
            })
        }
        TopologyKind::LeafSpine => {
            let d = LeafSpineSpec::default();
            Topology::LeafSpine(LeafSpineSpec {
                leaves: t.count(&["leaves"])?.unwrap_or(d.leaves),
                spines: t.count(&["spines"])?.unwrap_or(d.spines),
                hosts_per_leaf: t
                    .count(&["hosts_per_leaf", "hosts"])?
                    .unwrap_or(d.hosts_per_leaf),
                host_rate: t.rate(&["host_rate", "rate"])?.unwrap_or(d.host_rate),
                spine_rate: t.rate(&["spine_rate"])?,
            })
        }
        TopologyKind::FatTree => {
            let d = FatTreeSpec::default();
            Topology::FatTree(FatTreeSpec {
                k: t.count(&["k"])?.unwrap_or(d.k),
                link_rate: t.rate(&["link_rate", "rate"])?.unwrap_or(d.link_rate),
            })
        }
        TopologyKind::Custom => Topology::Custom(custom(at, t)?),
    };
    Ok(TopologyConfig {
        source: at.to_string(),
        topology,
        sized_by_workload,
        cpu_rate: t.rate(&["cpu_rate"])?,
        ecmp_seed: t.seed(&["ecmp_seed"])?.unwrap_or(0),
    })
}

/// The `node` and `link` lists of a custom graph.
fn custom(at: &str, t: &mut Table<'_>) -> Result<CustomSpec, TopologyError> {
    let mut spec = CustomSpec::default();
    for (i, raw) in t
        .list(&["node", "nodes"])?
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let mut e = Table::new(at, format!("node {i}: "), raw)?;
        let name = e.required_string(&["name"])?;
        let kind = match e.required_string(&["kind"])?.trim() {
            "host" => NodeKind::Host,
            "switch" => NodeKind::Switch,
            other => {
                return Err(e.error(
                    "kind",
                    format!("expected \"host\" or \"switch\", got '{other}'"),
                ))
            }
        };
        e.finish("a node")?;
        spec.nodes.push(NodeSpec { name, kind });
    }
    for (i, raw) in t
        .list(&["link", "links"])?
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let mut e = Table::new(at, format!("link {i}: "), raw)?;
        let from = e.required_string(&["from"])?;
        let to = e.required_string(&["to"])?;
        let capacity = e
            .rate(&["capacity", "rate"])?
            .ok_or_else(|| e.error("capacity", "missing"))?;
        let duplex = e.boolean(&["duplex"])?.unwrap_or(true);
        e.finish("a link")?;
        spec.links.push(LinkSpec {
            from,
            to,
            capacity,
            duplex,
        });
    }
    Ok(spec)
}

impl TopologyConfig {
    /// The config with a big switch's missing `hosts` set to
    /// `workload_hosts` (unchanged for every other config).
    pub fn sized_to(&self, workload_hosts: Option<u32>) -> Result<TopologyConfig, TopologyError> {
        let mut c = self.clone();
        if let (true, Topology::BigSwitch(b)) = (c.sized_by_workload, &mut c.topology) {
            b.hosts = workload_hosts.ok_or_else(|| TopologyError::Key {
                at: self.source.clone(),
                key: "hosts".into(),
                message: "not given, and there is no workload to size the big switch by".into(),
            })?;
            c.sized_by_workload = false;
        }
        Ok(c)
    }

    /// Builds the fabric; a big switch without `hosts` gets
    /// `workload_hosts`. Errors name the source and the element.
    pub fn build(&self, workload_hosts: Option<u32>) -> Result<Fabric, TopologyError> {
        let c = self.sized_to(workload_hosts)?;
        let at = || self.source.clone();
        let fabric = c
            .topology
            .build()
            .map_err(|err| TopologyError::Fabric { at: at(), err })?;
        let fabric = match self.cpu_rate {
            Some(r) => fabric
                .with_cpus(r)
                .map_err(|err| TopologyError::Fabric { at: at(), err })?,
            None => fabric,
        };
        Ok(fabric.with_ecmp_seed(self.ecmp_seed))
    }

    /// The kind of topology.
    pub fn kind(&self) -> TopologyKind {
        self.topology.kind()
    }

    /// The canonical spec string (every key written; rates in bit/s), or
    /// `None` for a custom graph.
    pub fn to_spec(&self) -> Option<String> {
        let mut s = format!("{}:", self.kind().name());
        for (k, v) in self.scalars() {
            let v = match v {
                Scalar::Count(n) => n.to_string(),
                Scalar::Number(x) => format!("{x:?}"),
                Scalar::Seed(n) => n.to_string(),
            };
            let _ = write!(s, "{k}={v},");
        }
        s.pop();
        (self.kind() != TopologyKind::Custom).then_some(s)
    }

    /// The config as a TOML file that [`parse_toml`] reads back equal
    /// (rates in bit/s).
    pub fn to_toml(&self) -> String {
        let mut s = format!("kind = \"{}\"\n", self.kind().name());
        for (k, v) in self.scalars() {
            let v = match v {
                Scalar::Count(n) => n.to_string(),
                Scalar::Number(x) => format!("{x:?}"),
                // TOML integers are i64: larger seeds go as strings.
                Scalar::Seed(n) if n > i64::MAX as u64 => format!("\"{n}\""),
                Scalar::Seed(n) => n.to_string(),
            };
            let _ = writeln!(s, "{k} = {v}");
        }
        if let Topology::Custom(c) = &self.topology {
            for n in &c.nodes {
                let _ = write!(
                    s,
                    "\n[[node]]\nname = {}\nkind = \"{}\"\n",
                    quote(&n.name),
                    node_kind(n.kind)
                );
            }
            for l in &c.links {
                let _ = write!(
                    s,
                    "\n[[link]]\nfrom = {}\nto = {}\ncapacity = {:?}\nduplex = {}\n",
                    quote(&l.from),
                    quote(&l.to),
                    l.capacity.0,
                    l.duplex
                );
            }
        }
        s
    }

    /// The config as a YAML file that [`parse_yaml`] reads back equal.
    pub fn to_yaml(&self) -> String {
        let mut s = format!("kind: {}\n", self.kind().name());
        for (k, v) in self.scalars() {
            let v = match v {
                Scalar::Count(n) => n.to_string(),
                Scalar::Number(x) => format!("{x:?}"),
                Scalar::Seed(n) => n.to_string(),
            };
            let _ = writeln!(s, "{k}: {v}");
        }
        if let Topology::Custom(c) = &self.topology {
            s.push_str(if c.nodes.is_empty() {
                "node: []\n"
            } else {
                "node:\n"
            });
            for n in &c.nodes {
                let _ = writeln!(
                    s,
                    "  - {{name: {}, kind: {}}}",
                    quote(&n.name),
                    node_kind(n.kind)
                );
            }
            s.push_str(if c.links.is_empty() {
                "link: []\n"
            } else {
                "link:\n"
            });
            for l in &c.links {
                let _ = writeln!(
                    s,
                    "  - {{from: {}, to: {}, capacity: {:?}, duplex: {}}}",
                    quote(&l.from),
                    quote(&l.to),
                    l.capacity.0,
                    l.duplex
                );
            }
        }
        s
    }

    /// The scalar keys of the config, in canonical order and spelling.
    fn scalars(&self) -> Vec<(&'static str, Scalar)> {
        use Scalar::{Count, Number};
        let mut v = match &self.topology {
            Topology::BigSwitch(b) => {
                let mut v = vec![];
                if !self.sized_by_workload {
                    v.push(("hosts", Count(b.hosts)));
                }
                v.push(("host_rate", Number(b.host_rate.0)));
                v
            }
            Topology::Tree(t) => vec![
                ("pods", Count(t.pods)),
                ("racks_per_pod", Count(t.racks_per_pod)),
                ("hosts_per_rack", Count(t.hosts_per_rack)),
                ("host_rate", Number(t.host_rate.0)),
                ("tor_oversub", Number(t.tor_oversub)),
                ("agg_oversub", Number(t.agg_oversub)),
            ],
            Topology::LeafSpine(t) => {
                let mut v = vec![
                    ("leaves", Count(t.leaves)),
                    ("spines", Count(t.spines)),
                    ("hosts_per_leaf", Count(t.hosts_per_leaf)),
                    ("host_rate", Number(t.host_rate.0)),
                ];
                if let Some(r) = t.spine_rate {
                    v.push(("spine_rate", Number(r.0)));
                }
                v
            }
            Topology::FatTree(t) => vec![("k", Count(t.k)), ("link_rate", Number(t.link_rate.0))],
            Topology::Custom(_) => vec![],
        };
        if let Some(r) = self.cpu_rate {
            v.push(("cpu_rate", Number(r.0)));
        }
        v.push(("ecmp_seed", Scalar::Seed(self.ecmp_seed)));
        v
    }

    /// A one-line description for reports: "tree (30 pods x 30 racks x 40
    /// hosts, 1 Gbit/s, ToR 2:1, agg 1:1)".
    pub fn describe(&self) -> String {
        let cpu = self
            .cpu_rate
            .map_or(String::new(), |r| format!(", CPUs {}", format_rate(r)));
        let body = match &self.topology {
            Topology::BigSwitch(b) if self.sized_by_workload => {
                format!("big switch, ports of {}", format_rate(b.host_rate))
            }
            Topology::BigSwitch(b) => format!(
                "big switch, {} ports of {}",
                b.hosts,
                format_rate(b.host_rate)
            ),
            Topology::Tree(t) => format!(
                "tree, {} pods x {} racks x {} hosts at {}, ToR {}:1, agg {}:1",
                t.pods,
                t.racks_per_pod,
                t.hosts_per_rack,
                format_rate(t.host_rate),
                t.tor_oversub,
                t.agg_oversub
            ),
            Topology::LeafSpine(t) => format!(
                "leaf-spine, {} leaves x {} hosts at {}, {} spines{}",
                t.leaves,
                t.hosts_per_leaf,
                format_rate(t.host_rate),
                t.spines,
                t.spine_rate
                    .map_or(String::new(), |r| format!(" at {}", format_rate(r)))
            ),
            Topology::FatTree(t) => {
                format!("fat-tree, k={}, links of {}", t.k, format_rate(t.link_rate))
            }
            Topology::Custom(c) => format!(
                "custom graph from {}, {} nodes, {} link entries",
                self.source,
                c.nodes.len(),
                c.links.len()
            ),
        };
        format!("{body}{cpu}")
    }
}

/// A scalar value of a config, as the writers spell it.
enum Scalar {
    Count(u32),
    Number(f64),
    Seed(u64),
}

fn node_kind(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Host => "host",
        NodeKind::Switch => "switch",
    }
}

/// A double-quoted string that TOML and YAML both read back as `s`.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            // Control characters and what YAML does not print as is.
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let _ = write!(q, "\\u{:04X}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn err(r: Result<TopologyConfig, TopologyError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn spec_strings() {
        let c = parse_spec("tree:pods=30,racks=30,hosts=40,tor_oversub=2,agg_oversub=1,rate=1Gbps")
            .unwrap();
        assert_eq!(c.topology, Topology::Tree(TreeSpec::default()));
        let f = c.build(None).unwrap();
        assert_eq!(f.n_hosts(), 36_000);
        let c = parse_spec("fat-tree:k=8").unwrap();
        assert_eq!(c.build(None).unwrap().n_hosts(), 128);
        let c = parse_spec("leaf-spine:leaves=4,spines=2,hosts=8,ecmp_seed=5").unwrap();
        let f = c.build(None).unwrap();
        assert_eq!((f.n_hosts(), f.ecmp_seed()), (32, 5));
        let c = parse_spec("bigswitch").unwrap();
        assert!(c.sized_by_workload);
        assert_eq!(c.build(Some(7)).unwrap().n_hosts(), 7);
        let c = parse_spec(" bigswitch:hosts=3,rate=10 Gbit/s,cpu_rate=1e9 ").unwrap();
        let f = c.build(Some(7)).unwrap();
        assert_eq!(f.n_hosts(), 3);
        assert_eq!(
            f.link(f.uplink(coflowkit_model::HostId(0))).capacity,
            BitsPerSec(10e9)
        );
        assert!(f.cpu(coflowkit_model::HostId(2)).is_some());
    }

    #[test]
    fn spec_errors_name_the_key() {
        assert_eq!(
            err(parse_spec("mesh:k=3")),
            "topology 'mesh:k=3': unknown kind 'mesh' (one of bigswitch, tree, leaf-spine, fat-tree, custom, or a .toml/.yaml file)"
        );
        assert_eq!(
            err(parse_spec("custom")),
            "topology 'custom': a custom graph comes from a .toml or .yaml file"
        );
        assert_eq!(
            err(parse_spec("tree:pods")),
            "topology 'tree:pods': 'pods' is not key=value"
        );
        assert_eq!(
            err(parse_spec("tree:pods=x")),
            "topology 'tree:pods=x': pods: expected a whole number from 0 to 4294967295, got 'x'"
        );
        assert_eq!(
            err(parse_spec("tree:podz=3")),
            "topology 'tree:podz=3': podz: unknown key for a tree (known: pods, racks_per_pod, racks, hosts_per_rack, hosts, host_rate, rate, tor_oversub, agg_oversub, cpu_rate, ecmp_seed)"
        );
        assert_eq!(
            err(parse_spec("tree:racks=3,racks_per_pod=4")),
            "topology 'tree:racks=3,racks_per_pod=4': racks_per_pod: given twice (as racks and racks_per_pod)"
        );
        assert_eq!(
            err(parse_spec("tree:pods=2,pods=3")),
            "topology 'tree:pods=2,pods=3': pods: given twice"
        );
        assert_eq!(
            err(parse_spec("fat-tree:rate=fast")),
            "topology 'fat-tree:rate=fast': rate: 'fast' is not a rate (write e.g. 1Gbps, 10 Gbit/s, 400 Mbit/s or 1e9)"
        );
        assert_eq!(
            parse_spec("fat-tree:k=5")
                .unwrap()
                .build(None)
                .unwrap_err()
                .to_string(),
            "topology 'fat-tree:k=5': fat-tree: k must be even and at least 2, got 5"
        );
        assert_eq!(
            parse_spec("tree:pods=0")
                .unwrap()
                .build(None)
                .unwrap_err()
                .to_string(),
            "topology 'tree:pods=0': tree: pods must be at least 1"
        );
        assert_eq!(
            parse_spec("bigswitch").unwrap().build(None).unwrap_err().to_string(),
            "topology 'bigswitch': hosts: not given, and there is no workload to size the big switch by"
        );
        assert_eq!(
            parse_spec("tree:cpu_rate=0").unwrap().build(None).unwrap_err().to_string(),
            "topology 'tree:cpu_rate=0': host CPU: capacity 0 bit/s is not a positive finite number"
        );
    }

    const CUSTOM: &str = r#"
kind = "custom"
ecmp_seed = 3

[[node]]
name = "h0"
kind = "host"

[[node]]
name = "h1"
kind = "host"

[[node]]
name = "tor0"
kind = "switch"

[[node]]
name = "tor1"
kind = "switch"

[[node]]
name = "agg0"
kind = "switch"

[[link]]
from = "h0"
to = "tor0"
capacity = "1Gbps"

[[link]]
from = "h1"
to = "tor1"
capacity = 1e9

[[link]]
from = "tor0"
to = "agg0"
capacity = "10 Gbit/s"

[[link]]
from = "tor1"
to = "agg9"
capacity = "10 Gbit/s"
"#;

    #[test]
    fn custom_files_name_the_link() {
        let c = parse_toml(CUSTOM, "topo.toml").unwrap();
        assert_eq!(
            c.build(None).unwrap_err().to_string(),
            "topo.toml: link 3 (tor1 -> agg9): unknown node agg9"
        );
        let fixed = CUSTOM.replace("agg9", "agg0");
        let f = parse_toml(&fixed, "topo.toml")
            .unwrap()
            .build(None)
            .unwrap();
        assert_eq!(f.n_hosts(), 2);
        assert_eq!(f.ecmp_seed(), 3);
        assert_eq!(
            f.path(coflowkit_model::HostId(0), coflowkit_model::HostId(1), 0)
                .iter()
                .map(|&l| f.link_name(l))
                .collect::<Vec<_>>(),
            [
                "host 0 uplink (h0 -> tor0)",
                "tor0 -> agg0",
                "agg0 -> tor1",
                "host 1 downlink (tor1 -> h1)"
            ]
        );
    }

    #[test]
    fn file_errors_name_the_file_and_key() {
        assert_eq!(
            err(parse_toml("kind = \"tree\"\npods = -3\n", "t.toml")),
            "t.toml: pods: expected a whole number from 0 to 4294967295, got -3"
        );
        assert_eq!(
            err(parse_toml("pods = 3\n", "t.toml")),
            "t.toml: kind: missing (one of bigswitch, tree, leaf-spine, fat-tree, custom)"
        );
        assert_eq!(
            err(parse_toml("kind = \"mesh\"\n", "t.toml")),
            "t.toml: kind: unknown kind 'mesh' (one of bigswitch, tree, leaf-spine, fat-tree, custom)"
        );
        assert_eq!(
            err(parse_toml("kind = \"tree\"\npods = [1,\n", "t.toml")),
            "t.toml:2:11: unclosed array, expected `]`"
        );
        assert_eq!(
            err(parse_yaml("kind: tree\npods: [1, 2\n", "t.yaml")),
            "t.yaml:2:7: unclosed bracket '['"
        );
        assert_eq!(
            err(parse_yaml(
                "kind: custom\nnode:\n  - {name: a, kind: router}\n",
                "t.yaml"
            )),
            "t.yaml: node 0: kind: expected \"host\" or \"switch\", got 'router'"
        );
        assert_eq!(
            err(parse_yaml(
                "kind: custom\nlink:\n  - {from: a, to: b}\n",
                "t.yaml"
            )),
            "t.yaml: link 0: capacity: missing"
        );
        assert_eq!(
            err(parse_yaml("kind: custom\nlink:\n  - {from: a, to: b, capacity: 1, speed: 2}\n", "t.yaml")),
            "t.yaml: link 0: speed: unknown key for a link (known: from, to, capacity, rate, duplex)"
        );
        assert_eq!(
            err(parse_yaml("- 1\n", "t.yaml")),
            "t.yaml: expected a table of keys, got a list"
        );
        assert!(err(load_file(Path::new("nowhere/t.toml"))).starts_with("nowhere/t.toml: "));
        assert!(load_file(Path::new("nowhere/t.toml"))
            .unwrap_err()
            .is_not_found());
        assert_eq!(
            err(load_file(Path::new("t.json"))),
            "t.json: a topology file ends in .toml, .yaml or .yml"
        );
    }

    #[test]
    fn yaml_and_toml_read_the_same() {
        let yaml = r#"
kind: custom
ecmp_seed: 3
node:
  - {name: h0, kind: host}
  - {name: h1, kind: host}
  - {name: tor0, kind: switch}
  - {name: tor1, kind: switch}
  - {name: agg0, kind: switch}
link:
  - {from: h0, to: tor0, capacity: 1Gbps}
  - {from: h1, to: tor1, capacity: 1000000000}
  - {from: tor0, to: agg0, capacity: 10 Gbit/s}
  - {from: tor1, to: agg0, capacity: 10 Gbit/s}
"#;
        let a = parse_yaml(yaml, "x").unwrap();
        let b = parse_toml(&CUSTOM.replace("agg9", "agg0"), "x").unwrap();
        assert_eq!(a, b);
    }

    fn round_trips(c: &TopologyConfig) {
        let back = parse_toml(&c.to_toml(), &c.source).unwrap();
        assert_eq!(&back, c, "{}", c.to_toml());
        let back = parse_yaml(&c.to_yaml(), &c.source).unwrap();
        assert_eq!(&back, c, "{}", c.to_yaml());
        if let Some(s) = c.to_spec() {
            let mut back = parse_spec(&s).unwrap();
            back.source = c.source.clone();
            assert_eq!(&back, c, "{s}");
        }
    }

    #[test]
    fn configs_round_trip() {
        for spec in [
            "bigswitch",
            "bigswitch:hosts=5,rate=2.5Gbps,cpu_rate=1e9",
            "tree",
            "tree:pods=2,racks=3,hosts=4,tor_oversub=2.5,agg_oversub=1.5,ecmp_seed=18446744073709551615",
            "leaf-spine:spine_rate=40Gbps",
            "fat-tree:k=6,rate=10Gbps",
        ] {
            round_trips(&parse_spec(spec).unwrap());
        }
        round_trips(&parse_toml(CUSTOM, "c.toml").unwrap());
    }

    fn arb_config() -> impl Strategy<Value = TopologyConfig> {
        let rate = (1u32..100_000).prop_map(|x| BitsPerSec(f64::from(x) * 1e6 / 7.0));
        let topology = prop_oneof![
            (1u32..100, rate.clone()).prop_map(|(hosts, host_rate)| Topology::BigSwitch(
                BigSwitchSpec { hosts, host_rate }
            )),
            (
                1u32..9,
                1u32..9,
                1u32..9,
                rate.clone(),
                0.1f64..8.0,
                0.1f64..8.0
            )
                .prop_map(
                    |(pods, racks_per_pod, hosts_per_rack, host_rate, tor_oversub, agg_oversub)| {
                        Topology::Tree(TreeSpec {
                            pods,
                            racks_per_pod,
                            hosts_per_rack,
                            host_rate,
                            tor_oversub,
                            agg_oversub,
                        })
                    }
                ),
            (
                1u32..9,
                1u32..9,
                1u32..9,
                rate.clone(),
                proptest::option::of(rate.clone())
            )
                .prop_map(|(leaves, spines, hosts_per_leaf, host_rate, spine_rate)| {
                    Topology::LeafSpine(LeafSpineSpec {
                        leaves,
                        spines,
                        hosts_per_leaf,
                        host_rate,
                        spine_rate,
                    })
                }),
            (1u32..6, rate.clone()).prop_map(|(h, link_rate)| Topology::FatTree(FatTreeSpec {
                k: 2 * h,
                link_rate
            })),
            (
                proptest::collection::vec(("\\PC{1,8}", any::<bool>()), 1..5),
                proptest::collection::vec((0usize..5, 0usize..5, rate, any::<bool>()), 0..6)
            )
                .prop_map(|(nodes, links)| {
                    let nodes: Vec<NodeSpec> = nodes
                        .into_iter()
                        .map(|(name, host)| NodeSpec {
                            name,
                            kind: if host {
                                NodeKind::Host
                            } else {
                                NodeKind::Switch
                            },
                        })
                        .collect();
                    let links = links
                        .into_iter()
                        .map(|(a, b, capacity, duplex)| LinkSpec {
                            from: nodes[a % nodes.len()].name.clone(),
                            to: nodes[b % nodes.len()].name.clone(),
                            capacity,
                            duplex,
                        })
                        .collect();
                    Topology::Custom(CustomSpec { nodes, links })
                }),
        ];
        (topology, proptest::option::of(1u32..1000), any::<u64>()).prop_map(
            |(topology, cpu, ecmp_seed)| TopologyConfig {
                source: "p".into(),
                topology,
                sized_by_workload: false,
                cpu_rate: cpu.map(|c| BitsPerSec(f64::from(c) * 1e7)),
                ecmp_seed,
            },
        )
    }

    proptest! {
        #[test]
        fn any_config_round_trips(c in arb_config()) {
            round_trips(&c);
        }

        #[test]
        fn spec_parser_never_panics(s in "\\PC{0,40}") {
            let _ = parse_spec(&s);
        }

        #[test]
        fn file_parsers_never_panic(s in "[a-z_=:\\[\\]{}\"'0-9 .\\n-]{0,80}") {
            let _ = parse_toml(&s, "p.toml");
            let _ = parse_yaml(&s, "p.yaml");
        }
    }
}
