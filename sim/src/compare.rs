//! One trace replayed under several machines and models, the way PSINS's
//! paper sets Jaws and Sapphire side by side: a table (text, CSV, JSON)
//! and one chart. `--vary KEY=V1,V2,...` makes the machines from one file
//! by changing one key, for sweeps (number of buses, BCS time slice).

use crate::engine::{replay, Options};
use crate::input;
use crate::machine::{Machine, MachineError};
use crate::model;
use crate::SimError;
use serde::Serialize;
use std::path::Path;

/// One machine of a comparison.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its label in the table and the chart.
    pub label: String,
    /// The value of the varied key, when it is a number (the chart's x).
    pub x: Option<f64>,
    /// The machine.
    pub machine: Machine,
}

/// One replay's line of the table.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    /// The machine's label.
    pub machine: String,
    /// The model.
    pub model: String,
    /// Predicted runtime, s.
    pub runtime_s: f64,
    /// Against the traced runtime, %: the prediction's error when the
    /// machine file describes the traced machine (`traced_machine`), else
    /// the difference between the two machines.
    pub error_pct: Option<f64>,
    /// Whether the machine file describes the traced machine (`[machine]
    /// traced_on`).
    pub traced_machine: bool,
    /// Communication over all ranks, s.
    pub comm_s: f64,
    /// Wait over all ranks, s.
    pub wait_s: f64,
    /// Messages' wait for network resources, s.
    pub resource_wait_s: f64,
    /// With `--links`, under a model whose messages share links: the
    /// busiest link and what sharing the links cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<RowLinks>,
}

/// A row's links, with `--links` ([`crate::report::links`]).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RowLinks {
    /// The busiest link's name (by utilisation, then busy time).
    pub busiest: String,
    /// Its utilisation over the run, %.
    pub utilisation_pct: f64,
    /// Time flows lost to sharing, summed over every link, s.
    pub slowed_s: f64,
    /// The level whose links held flows back the most (of the network's
    /// tiers: [`crate::network::Graph::level`]), and the time lost there,
    /// s: what two machines' differences come down to, level by level.
    pub slowed_level: String,
    pub slowed_level_s: f64,
}

impl RowLinks {
    /// From what each link carried over a run of `runtime` ns.
    fn new(loads: &[crate::network::load::LinkLoad], runtime: f64) -> Option<RowLinks> {
        let r = crate::report::links::LinksReport::new(loads, runtime, 1);
        let top = r.busiest.first()?;
        let level = r.levels.iter().max_by(|a, b| {
            a.slowed_s
                .total_cmp(&b.slowed_s)
                .then_with(|| b.level.cmp(&a.level))
        })?;
        Some(RowLinks {
            busiest: top.name.clone(),
            utilisation_pct: top.utilisation_pct,
            slowed_s: r.all.iter().map(|l| l.slowed_s).sum(),
            slowed_level: level.level.clone(),
            slowed_level_s: level.slowed_s,
        })
    }
}

/// The table and the traced runtime.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Comparison {
    /// The traced run's runtime (end of `MPI_Init` to start of the last `MPI_Finalize`), s.
    pub measured_runtime_s: Option<f64>,
    /// One row per machine and model.
    pub rows: Vec<Row>,
}

/// Sets the dotted `key` of a TOML table to `value` (a number, a boolean,
/// or else a string), creating tables on the way.
fn set(doc: &mut toml::Table, key: &str, value: &str) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, tables) = parts.split_last().ok_or("empty key")?;
    let mut t = doc;
    for p in tables {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` in `{key}` is not a table"))?;
    }
    let v = if let Ok(i) = value.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(f) = value.parse::<f64>() {
        toml::Value::Float(f)
    } else if let Ok(b) = value.parse::<bool>() {
        toml::Value::Boolean(b)
    } else {
        toml::Value::String(value.to_owned())
    };
    t.insert(last.to_string(), v);
    Ok(())
}

/// A number in `value`, unit or not (`"100us"` is 100), for a chart's x.
fn leading_number(value: &str) -> Option<f64> {
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    value[..end].parse().ok()
}

/// The machines made from `base` by setting `key` to each of `values`.
pub fn vary(base: &Machine, key: &str, values: &[String]) -> Result<Vec<Case>, MachineError> {
    let err = |what: String| MachineError {
        file: base.file.clone(),
        line: None,
        what,
    };
    let doc: toml::Table = toml::from_str(base.source()).map_err(|e| err(e.message().to_owned()))?;
    values
        .iter()
        .map(|v| {
            let mut d = doc.clone();
            set(&mut d, key, v).map_err(|w| err(format!("--vary {key}: {w}")))?;
            let text = toml::to_string(&d).map_err(|e| err(e.to_string()))?;
            let machine = Machine::parse(&format!("{} with {key} = {v}", base.file), &text)?;
            Ok(Case {
                label: format!("{key}={v}"),
                x: leading_number(v),
                machine,
            })
        })
        .collect()
}

/// Replays `trace` on every case under every model; with `links`, a
/// model whose messages share links also names each run's busiest link.
pub fn compare(
    trace: &Path,
    cases: &[Case],
    models: &[String],
    flops_per_ns: f64,
    links: bool,
    progress: &dyn Fn(&str),
) -> Result<Comparison, SimError> {
    let mut rows = Vec::new();
    let mut measured = None;
    for case in cases {
        for name in models {
            progress(&format!("{} under {name}", case.label));
            let mut m = model::build(name, &case.machine)?;
            let counted = links && m.count_link_loads();
            let mut src = input::open(trace, flops_per_ns)?;
            let out = replay(src.as_mut(), &case.machine, m.as_mut(), Options::default())?;
            if measured.is_none() {
                measured = src
                    .measured()
                    .map(|m| m.span.iter().copied().fold(0.0, f64::max))
                    .filter(|&v| v > 0.0);
            }
            let sum = |f: fn(&crate::engine::stats::ActorStats) -> f64| {
                out.stats.actors.iter().map(f).sum::<f64>() / 1e9
            };
            rows.push(Row {
                machine: case.label.clone(),
                model: name.clone(),
                runtime_s: out.runtime / 1e9,
                error_pct: measured.map(|mr| (out.runtime - mr) / mr * 100.0),
                traced_machine: case.machine.traced_on.is_some(),
                comm_s: sum(|a| a.comm),
                wait_s: sum(|a| a.wait),
                resource_wait_s: out.stats.resource_wait / 1e9,
                links: counted
                    .then(|| m.link_loads())
                    .flatten()
                    .and_then(|l| RowLinks::new(&l, out.runtime)),
            });
        }
    }
    Ok(Comparison {
        measured_runtime_s: measured.map(|m| m / 1e9),
        rows,
    })
}

impl Row {
    /// What `error_pct` measures: `error` on a file of the traced machine,
    /// `difference` on another.
    pub fn comparison(&self) -> &'static str {
        if self.traced_machine {
            "error"
        } else {
            "difference"
        }
    }
}

impl Comparison {
    /// Whether some row has its links (`--links`).
    fn has_links(&self) -> bool {
        self.rows.iter().any(|r| r.links.is_some())
    }

    /// The table as CSV (with `--links`, five more columns).
    pub fn csv(&self) -> String {
        let links = self.has_links();
        let mut s =
            String::from("machine,model,runtime_s,error_pct,comparison,comm_s,wait_s,resource_wait_s");
        s.push_str(if links {
            ",busiest_link,busiest_link_utilisation_pct,links_slowed_s,most_slowed_level,level_slowed_s\n"
        } else {
            "\n"
        });
        for r in &self.rows {
            s.push_str(&format!(
                "\"{}\",{},{},{},{},{},{},{}",
                r.machine.replace('"', "'"),
                r.model,
                r.runtime_s,
                r.error_pct.map_or(String::new(), |e| e.to_string()),
                r.comparison(),
                r.comm_s,
                r.wait_s,
                r.resource_wait_s
            ));
            if links {
                s.push_str(&r.links.as_ref().map_or(",,,,,".into(), |l| {
                    format!(
                        ",\"{}\",{},{},\"{}\",{}",
                        l.busiest, l.utilisation_pct, l.slowed_s, l.slowed_level, l.slowed_level_s
                    )
                }));
            }
            s.push('\n');
        }
        s
    }

    /// The chart: runtime against the varied value (a line per model) when
    /// every case has a numeric x, else a bar per model for each machine.
    /// A swept value of 0 or less (`buses = 0`: unlimited) cannot sit on
    /// the line's axis: it becomes a dashed reference line of its own.
    /// `traced` adds the traced run's runtime as a reference.
    pub fn svg(
        &self,
        cases: &[Case],
        models: &[String],
        title: &str,
        traced: bool,
    ) -> anyhow::Result<String> {
        let value = |case: &Case, model: &str| {
            self.rows
                .iter()
                .find(|r| r.machine == case.label && r.model == model)
                .map_or(f64::NAN, |r| r.runtime_s)
        };
        let references: Vec<(String, f64)> = self
            .measured_runtime_s
            .filter(|_| traced)
            .map(|m| ("traced run".to_string(), m))
            .into_iter()
            .collect();
        let on_axis: Vec<&Case> = cases.iter().filter(|c| c.x.is_some_and(|x| x > 0.0)).collect();
        if on_axis.len() > 1 && cases.iter().all(|c| c.x.is_some()) {
            let key = cases[0].label.split('=').next().unwrap_or("value").to_string();
            let (x0, x1) = on_axis
                .iter()
                .filter_map(|c| c.x)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                    (a.min(x), b.max(x))
                });
            let mut series: Vec<pnmpi_plot::Series> = models
                .iter()
                .map(|m| pnmpi_plot::Series {
                    name: m.clone(),
                    points: on_axis
                        .iter()
                        .map(|c| (c.x.unwrap_or(0.0), value(c, m)))
                        .collect(),
                    kind: pnmpi_plot::Kind::Measured,
                })
                .collect();
            let off_axis = cases
                .iter()
                .filter(|c| !on_axis.iter().any(|o| o.label == c.label))
                .flat_map(|c| {
                    models
                        .iter()
                        .map(move |m| (format!("{m}, {}", c.label), value(c, m)))
                });
            for (name, v) in off_axis.chain(references) {
                series.push(pnmpi_plot::Series {
                    name,
                    points: vec![(x0, v), (x1, v)],
                    kind: pnmpi_plot::Kind::Reference,
                });
            }
            return pnmpi_plot::Chart {
                title: title.to_owned(),
                x_label: key,
                y_label: "predicted runtime (s)".into(),
                log_x: x1 / x0 >= 8.0,
                log_y: false,
                legend_lower_right: false,
                series,
            }
            .svg();
        }
        pnmpi_plot::BarChart {
            title: title.to_owned(),
            y_label: "predicted runtime (s)".into(),
            groups: cases.iter().map(|c| c.label.clone()).collect(),
            bars: models
                .iter()
                .map(|m| (m.clone(), cases.iter().map(|c| value(c, m)).collect()))
                .collect(),
            references,
        }
        .svg()
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let w = crate::report::column_width(self.rows.iter().map(|r| r.machine.as_str()), 7);
        writeln!(
            f,
            "{:<w$}  {:<8} {:>14} {:>21} {:>12} {:>12} {:>14}",
            "machine", "model", "runtime (s)", "vs traced", "comm (s)", "wait (s)", "resources (s)"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:<w$}  {:<8} {:>14.6} {:>21} {:>12.6} {:>12.6} {:>14.6}",
                r.machine,
                r.model,
                r.runtime_s,
                r.error_pct
                    .map_or("-".into(), |e| format!("{e:+.1} % {}", r.comparison())),
                r.comm_s,
                r.wait_s,
                r.resource_wait_s
            )?;
        }
        if let Some(m) = self.measured_runtime_s {
            writeln!(
                f,
                "traced run: {m:.6} s (end of MPI_Init to start of MPI_Finalize)"
            )?;
        }
        if self.has_links() {
            writeln!(
                f,
                "\n{:<w$}  {:<8} {:<32} {:>7} {:>14}  {:<12} {:>14}",
                "machine", "model", "busiest link", "util %", "slowed (s)", "most slowed", "there (s)"
            )?;
            for r in &self.rows {
                if let Some(l) = &r.links {
                    writeln!(
                        f,
                        "{:<w$}  {:<8} {:<32} {:>7.1} {:>14.6}  {:<12} {:>14.6}",
                        r.machine,
                        r.model,
                        l.busiest,
                        l.utilisation_pct,
                        l.slowed_s,
                        l.slowed_level,
                        l.slowed_level_s
                    )?;
                }
            }
            writeln!(
                f,
                "(slowed: the time flows lost to sharing, over every link; most slowed: the level whose links lost the most)"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_sets_nested_keys_and_revalidates() {
        let m = Machine::parse(
            "m.toml",
            "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n",
        )
        .unwrap();
        let cases = vary(&m, "network.buses", &["1".into(), "4".into()]).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[1].machine.network.buses, 4);
        assert_eq!(cases[1].x, Some(4.0));
        let cases = vary(&m, "model.bcs.time_slice", &["100us".into()]).unwrap();
        assert!(cases[0].machine.source().contains("time_slice = \"100us\""));
        assert_eq!(cases[0].x, Some(100.0));
        let e = vary(&m, "machine.nodes", &["0".into()]).unwrap_err().to_string();
        assert!(e.contains("nodes must be at least 1"), "{e}");
        let e = vary(&m, "network.latency.x", &["1".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a table"), "{e}");
    }
}
