//! A `tlsbench cold` run's exports (docs/results.md, "Cold runs"): JSON, the whole cold document in
//! its serde form; CSV, one row per scenario, stack, process, side and phase, with its unit.

use crate::cold_document::{ColdDocument, ColdProcess};

/// The CSV's columns; `side` is `client`, `server`, or `process` for the process's start
/// (phase `start`, in ns whatever the measure).
pub const CSV_COLUMNS: [&str; 10] =
    ["scenario", "stack", "process", "side", "phase", "value", "unit", "library", "status", "reason"];

pub fn json(doc: &ColdDocument) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(doc)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Every figure on a row of its own, in the order measured; a row that failed or is unsupported
/// without figures has one line with its status and reason and no process.
pub fn csv(doc: &ColdDocument) -> anyhow::Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(CSV_COLUMNS)?;
    for scenario in &doc.scenarios {
        for row in &scenario.rows {
            let status = serde_json::to_value(row.status)?.as_str().expect("a status is a name").to_string();
            let line = |process: String, side: &str, phase: &str, value: String, unit: &str| {
                let (library, reason) =
                    (row.library.clone().unwrap_or_default(), row.reason.clone().unwrap_or_default());
                let fields = [&scenario.scenario, &row.stack, &process, side, phase, &value, unit, &library, &status];
                fields.map(String::from).into_iter().chain([reason]).collect::<Vec<String>>()
            };
            if row.processes.is_empty() {
                writer.write_record(line(String::new(), "", "", String::new(), ""))?;
            }
            for (index, process) in row.processes.iter().enumerate() {
                for (side, phase, value, unit) in figures(process, &scenario.phases, &doc.run.unit) {
                    writer.write_record(line(index.to_string(), side, phase, value.to_string(), unit))?;
                }
            }
        }
    }
    Ok(writer.into_inner()?)
}

/// A process's figures in order: its start, then the client's phases, then the server's.
type Figure<'a> = (&'static str, &'a str, u64, &'a str);

fn figures<'a>(process: &'a ColdProcess, phases: &'a [String], unit: &'a str) -> Vec<Figure<'a>> {
    let mut out: Vec<Figure> = process.start_ns.map(|ns| ("process", "start", ns, "ns")).into_iter().collect();
    for (side, values) in [("client", &process.client), ("server", &process.server)] {
        out.extend(phases.iter().filter_map(|p| Some((side, p.as_str(), *values.get(p)?, unit))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cold_document::fixture;

    #[test]
    fn the_json_holds_the_run_the_machine_and_every_figure_with_its_unit() {
        let doc = fixture::document();
        let text = String::from_utf8(json(&doc).unwrap()).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["schema_version"], 1);
        let run = &value["run"];
        assert_eq!(run["id"], "cold-1");
        assert_eq!((run["measure"].as_str(), run["unit"].as_str()), (Some("time"), Some("ns")));
        assert_eq!(run["processes"], 2);
        assert_eq!(run["stacks"], serde_json::json!(["openssl", "rustls-ring", "boringssl"]));
        assert_eq!(run["environment"]["kernel"], "6.1.0-test");
        assert!(run["command_line"].is_array() && run["started"].is_string() && run["tlsbench_version"].is_string());
        let full = &value["scenarios"][0];
        assert_eq!(full["phases"], serde_json::json!(["context", "first", "second"]));
        let openssl = &full["rows"][0];
        assert_eq!((openssl["stack"].as_str(), openssl["status"].as_str()), (Some("openssl"), Some("ok")));
        assert_eq!(openssl["library"], "OpenSSL 3.0.13 30 Jan 2024");
        let process = &openssl["processes"][1];
        assert_eq!(process["start_ns"], 2_100_000);
        assert_eq!(process["client"], serde_json::json!({"context": 410_000, "first": 1_200_000, "second": 300_000}));
        assert_eq!(process["server"]["second"], 280_000);
        let unsupported = &value["scenarios"][1]["rows"][2];
        assert_eq!(unsupported["status"], "unsupported");
        assert_eq!(unsupported["reason"], "boringssl: no session ids");
        assert_eq!(unsupported["processes"], serde_json::json!([]));
        assert_eq!(serde_json::from_str::<ColdDocument>(&text).unwrap(), doc);
    }

    #[test]
    fn the_csv_has_a_line_per_figure_and_one_per_row_without_figures() {
        let text = String::from_utf8(csv(&fixture::document()).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "scenario,stack,process,side,phase,value,unit,library,status,reason");
        let full = fixture::FULL;
        assert_eq!(lines[1], format!("{full},openssl,0,process,start,2000000,ns,OpenSSL 3.0.13 30 Jan 2024,ok,"));
        assert_eq!(lines[2], format!("{full},openssl,0,client,context,400000,ns,OpenSSL 3.0.13 30 Jan 2024,ok,"));
        let resume = fixture::RESUME;
        assert!(lines
            .contains(&format!("{resume},rustls-ring,1,server,second_resume,153333,ns,rustls 0.23.29,ok,").as_str()));
        assert!(lines.contains(&format!("{resume},boringssl,,,,,,,unsupported,boringssl: no session ids").as_str()));
        // Per process: its start and 3 phases a side in a full handshake (2 stacks of 2 and the
        // failed one's first), 4 in a resumption (2 stacks of 2); the unsupported row's line.
        let (full_lines, resume_lines) = (5 * (1 + 2 * 3), 4 * (1 + 2 * 4));
        assert_eq!(lines.len(), 1 + full_lines + resume_lines + 1, "{text}");
        let failed =
            format!("{full},boringssl,0,server,second,250000,ns,BoringSSL,failed,runner was killed by signal 9");
        assert!(lines.contains(&failed.as_str()), "{text}");
    }
}
