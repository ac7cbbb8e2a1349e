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
}
