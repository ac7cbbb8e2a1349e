//! The JSON export: the whole results document in its serde form, the schema of docs/results.md.

use super::Exporter;
use crate::results::RunDocument;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(doc)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn round_trips() {
        let doc = fixture::document();
        let bytes = JsonExporter.serialize(&doc).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("{\n  \"schema_version\": 1,\n  \"run\": {\n    \"id\": \"run-1\","), "{text}");
        assert!(text.contains("\"status\": \"unsupported\""));
        assert!(text.contains("\"side\": \"client\""));
        assert_eq!(serde_json::from_str::<RunDocument>(&text).unwrap(), doc);
    }

    #[test]
    fn reads_an_exported_document_and_refuses_another_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, JsonExporter.serialize(&fixture::document()).unwrap()).unwrap();
        assert_eq!(RunDocument::read(&path).unwrap(), fixture::document());
        std::fs::write(&path, r#"{"schema_version": 2, "run": {}}"#).unwrap();
        let err = RunDocument::read(&path).unwrap_err().to_string();
        assert_eq!(err, format!("{} has results schema version 2; this tlsbench reads version 1", path.display()));
        std::fs::write(&path, "[1, 2]").unwrap();
        let err = RunDocument::read(&path).unwrap_err().to_string();
        assert_eq!(err, format!("{} is not a tlsbench results document (it has no schema_version)", path.display()));
    }
}
