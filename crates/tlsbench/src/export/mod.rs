//! Exports of a run's results document to files (docs/results.md): JSON, CSV, Markdown and the
//! formats continuous-benchmarking services read, each one small type behind [`Exporter`]; and
//! a `tlsbench cold` run's document, in JSON and CSV (cold.rs).

mod bencher;
pub mod cold;
mod csv;
mod github_action;
mod json;
mod markdown;

use std::path::Path;

use anyhow::Context;

pub use self::bencher::BencherExporter;
pub use self::csv::CsvExporter;
pub use self::github_action::GithubActionExporter;
pub use self::json::JsonExporter;
pub use self::markdown::MarkdownExporter;
use crate::results::{CellResult, RunDocument, Status};

/// Turns a results document into the bytes of one file format.
pub trait Exporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>>;
}

/// Serializes `doc` with `exporter` and writes it to `path`, replacing any file there.
pub fn write_to(path: &Path, exporter: &dyn Exporter, doc: &RunDocument) -> anyhow::Result<()> {
    write_bytes(path, exporter.serialize(doc))
}

/// Writes an export's bytes to `path`, replacing any file there; either failure names the file.
pub fn write_bytes(path: &Path, bytes: anyhow::Result<Vec<u8>>) -> anyhow::Result<()> {
    let bytes = bytes.with_context(|| format!("cannot export results to {}", path.display()))?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write results to {}", path.display()))
}

/// The name a cell goes by in the services' formats: `scenario/pair/side`.
fn benchmark_name(cell: &CellResult) -> String {
    format!("{}/{}/{}", cell.key.scenario, cell.key.pair_label(), cell.side)
}

/// The cells that have a number, with their figure (the median, or a time rate's faster-half mean)
/// and its interval, in the document's order.
fn with_numbers(doc: &RunDocument) -> impl Iterator<Item = (&CellResult, f64, [f64; 2])> {
    doc.results.iter().filter(|c| c.status == Status::Ok).filter_map(|c| Some((c, c.figure()?, c.ci95?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn writes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write_to(&path, &JsonExporter, &fixture::document()).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("\"schema_version\": 1"));
    }

    #[test]
    fn names_the_file_it_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("run.csv");
        let err = write_to(&path, &CsvExporter, &fixture::document()).unwrap_err();
        assert!(format!("{err:#}").contains(&path.display().to_string()), "{err:#}");
    }
}
