//! The machine file's tables, as serde reads them, and their validation.

use super::error::MachineError;
use super::parts::{
    default_scaling_of, CollChoice, Collectives, Mapping, Network, NodeSpec, Scaling, COLL_NAMES,
};
use super::Machine;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The whole file. Unknown keys are errors, except in `[model.*]`, which
/// each model reads for itself.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    machine: MachineTable,
    #[serde(default)]
    node: Vec<toml::Spanned<NodeTable>>,
    #[serde(default)]
    mapping: Option<toml::Spanned<MappingTable>>,
    /// Optional: a model that carries all its own parameters (LogGOPS's
    /// `[model.loggops]`) needs none; the others ask for it when built
    /// ([`Machine::require_network`]).
    #[serde(default)]
    network: Option<Network>,
    #[serde(default)]
    collectives: CollTable,
    /// Read by each model for itself ([`Machine::model_table`]).
    #[serde(default, rename = "model")]
    _model: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineTable {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    traced_on: Option<String>,
    #[serde(default)]
    model: Option<String>,
    nodes: toml::Spanned<u32>,
    #[serde(default = "one")]
    cores_per_node: u32,
    #[serde(default = "one_f")]
    cpu_ratio: toml::Spanned<f64>,
    #[serde(default = "one")]
    links_in: u32,
    #[serde(default = "one")]
    links_out: u32,
}

fn one() -> u32 {
    1
}

fn one_f() -> toml::Spanned<f64> {
    toml::Spanned::new(0..0, 1.0)
}

/// `[[node]]`: overrides for some nodes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeTable {
    /// The nodes this applies to.
    ids: Vec<u32>,
    #[serde(default)]
    cores: Option<u32>,
    #[serde(default)]
    cpu_ratio: Option<f64>,
    #[serde(default)]
    links_in: Option<u32>,
    #[serde(default)]
    links_out: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MappingTable {
    #[serde(default)]
    policy: Option<String>,
    #[serde(default)]
    nodes: Option<Vec<u32>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CollEntry {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    scaling: Option<Scaling>,
    #[serde(default)]
    algorithm: Option<String>,
}

/// `[collectives]`: `mode` and `scaling` for all, then a table per
/// collective. Read as values (serde's `flatten` loses positions).
#[derive(Deserialize, Default)]
#[serde(transparent)]
struct CollTable {
    keys: BTreeMap<String, toml::Spanned<toml::Value>>,
}

impl File {
    /// Checks what serde cannot: ranges, ids, the mapping.
    pub(super) fn validate(self, file: &str, source: &str) -> Result<Machine, MachineError> {
        let at = |span: std::ops::Range<usize>, what: String| MachineError {
            file: file.to_owned(),
            line: (span.end > 0).then(|| source[..span.start].matches('\n').count() + 1),
            what,
        };
        let nodes = *self.machine.nodes.get_ref();
        if nodes == 0 {
            return Err(at(
                self.machine.nodes.span(),
                "[machine] nodes must be at least 1".into(),
            ));
        }
        if self.machine.cores_per_node == 0 {
            return Err(at(0..0, "[machine] cores_per_node must be at least 1".into()));
        }
        let ratio = *self.machine.cpu_ratio.get_ref();
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(at(
                self.machine.cpu_ratio.span(),
                "[machine] cpu_ratio must be above 0 (2 means twice as fast as the traced machine)".into(),
            ));
        }
        if self.machine.links_in == 0 || self.machine.links_out == 0 {
            return Err(at(
                0..0,
                "[machine] links_in and links_out must be at least 1".into(),
            ));
        }
        let mut specs = vec![
            NodeSpec {
                cores: self.machine.cores_per_node,
                cpu_ratio: ratio,
                links_in: self.machine.links_in,
                links_out: self.machine.links_out,
            };
            nodes as usize
        ];
        for n in &self.node {
            let t = n.get_ref();
            for &id in &t.ids {
                let spec = specs.get_mut(id as usize).ok_or_else(|| {
                    at(
                        n.span(),
                        format!("[[node]] ids: node {id} does not exist ([machine] nodes = {nodes})"),
                    )
                })?;
                if let Some(c) = t.cores {
                    if c == 0 {
                        return Err(at(n.span(), "[[node]] cores must be at least 1".into()));
                    }
                    spec.cores = c;
                }
                for (v, slot) in [
                    (t.links_in, &mut spec.links_in),
                    (t.links_out, &mut spec.links_out),
                ] {
                    match v {
                        Some(0) => {
                            return Err(at(
                                n.span(),
                                "[[node]] links_in and links_out must be at least 1".into(),
                            ))
                        }
                        Some(l) => *slot = l,
                        None => {}
                    }
                }
                if let Some(r) = t.cpu_ratio {
                    if !(r.is_finite() && r > 0.0) {
                        return Err(at(n.span(), "[[node]] cpu_ratio must be above 0".into()));
                    }
                    spec.cpu_ratio = r;
                }
            }
        }
        let mapping = match &self.mapping {
            None => Mapping::Block,
            Some(m) => {
                let t = m.get_ref();
                match (t.policy.as_deref(), &t.nodes) {
                    (Some("block") | None, None) => Mapping::Block,
                    (Some("cyclic"), None) => Mapping::Cyclic,
                    (Some("explicit") | None, Some(list)) => {
                        if let Some(bad) = list.iter().find(|&&x| x >= nodes) {
                            return Err(at(
                                m.span(),
                                format!(
                                    "[mapping] nodes: node {bad} does not exist ([machine] nodes = {nodes})"
                                ),
                            ));
                        }
                        Mapping::Explicit(list.clone())
                    }
                    (Some(p), None) => {
                        return Err(at(
                            m.span(),
                            format!("[mapping] policy `{p}`: use block, cyclic, or give `nodes = [...]`"),
                        ))
                    }
                    (Some(p), Some(_)) => {
                        return Err(at(
                            m.span(),
                            format!(
                                "[mapping] policy `{p}` with a `nodes` list: the list is an explicit mapping"
                            ),
                        ))
                    }
                }
            }
        };
        let collectives = self.collectives.resolve(file, source)?;
        let network_given = self.network.is_some();
        let mut network = self.network.unwrap_or_else(Network::unspecified);
        if let Some(t) = &mut network.topology {
            t.fit(nodes).map_err(|what| {
                // The table's own line: serde keeps no position for it here.
                let start = source.find("[network.topology]").map_or(0..0, |s| s..s + 1);
                at(start, format!("[network.topology] {what}"))
            })?;
        }
        Ok(Machine {
            file: file.to_owned(),
            source: source.to_owned(),
            name: self.machine.name.unwrap_or_else(|| file.to_owned()),
            traced_on: self.machine.traced_on,
            model: self.machine.model,
            nodes: specs,
            mapping,
            network,
            network_given,
            collectives,
        })
    }
}

impl CollTable {
    fn resolve(self, file: &str, source: &str) -> Result<Collectives, MachineError> {
        // A span of 0..0 is a table the file does not have: no line.
        let err = |span: std::ops::Range<usize>, what: String| MachineError {
            file: file.to_owned(),
            line: (span.end > 0).then(|| source[..span.start].matches('\n').count() + 1),
            what,
        };
        let mut default_mode = "analytic".to_string();
        let mut default_scaling = None;
        let mut per: BTreeMap<&str, (CollEntry, std::ops::Range<usize>)> = BTreeMap::new();
        for (key, value) in &self.keys {
            let span = value.span();
            let v = value.get_ref().clone();
            match key.as_str() {
                "mode" => {
                    default_mode = v
                        .as_str()
                        .ok_or_else(|| err(span.clone(), "[collectives] mode: expected a string".into()))?
                        .to_owned()
                }
                "scaling" => {
                    default_scaling =
                        Some(Scaling::deserialize(v).map_err(|e| {
                            err(span.clone(), format!("[collectives] scaling: {}", e.message()))
                        })?)
                }
                name => {
                    let Some(&(n, _)) = COLL_NAMES.iter().find(|(n, _)| *n == name) else {
                        let names: Vec<&str> = COLL_NAMES.iter().map(|(n, _)| *n).collect();
                        return Err(err(
                            span,
                            format!(
                                "[collectives] `{name}`: unknown collective; use mode, scaling or one of {}",
                                names.join(", ")
                            ),
                        ));
                    };
                    let entry = CollEntry::deserialize(v)
                        .map_err(|e| err(span.clone(), format!("[collectives.{name}]: {}", e.message())))?;
                    per.insert(n, (entry, span));
                }
            }
        }
        let mut out = Collectives::default();
        for (name, c) in COLL_NAMES {
            let (e, span) = match per.get(name) {
                Some((e, s)) => (Some(e), s.clone()),
                None => (None, 0..0),
            };
            let mode = e
                .and_then(|e| e.mode.clone())
                .unwrap_or_else(|| default_mode.clone());
            let choice = match mode.as_str() {
                "analytic" => CollChoice::Analytic(
                    e.and_then(|e| e.scaling)
                        .or(default_scaling)
                        .unwrap_or_else(|| default_scaling_of(c)),
                ),
                "algorithmic" => {
                    let alg = e
                        .and_then(|e| e.algorithm.clone())
                        .unwrap_or_else(|| crate::algorithms::default_algorithm(c).to_owned());
                    if let Err(what) = crate::algorithms::check_algorithm(c, &alg) {
                        return Err(err(span, format!("[collectives.{name}] algorithm: {what}")));
                    }
                    CollChoice::Algorithmic(alg)
                }
                other => {
                    return Err(err(
                        span,
                        format!("[collectives] mode `{other}` for {name}: use analytic or algorithmic"),
                    ))
                }
            };
            out.choices
                .iter_mut()
                .find(|(k, _)| *k == c)
                .expect("all listed")
                .1 = choice;
        }
        Ok(out)
    }
}
