//! Python's core metadata (`*.dist-info/METADATA`): what devlens reads of an installed
//! distribution — its name, version, summary and long description (the README it was published
//! with). Shared by the dependency scan and the package reader.

use std::path::Path;

/// A METADATA file larger than this is not one a package would ship.
const MAX_METADATA_BYTES: u64 = 1024 * 1024;

/// The fields of a `METADATA` file devlens reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Metadata {
    pub name: String,
    pub version: String,
    pub summary: String,
    /// `Description-Content-Type`, lower case (`text/markdown`, `text/x-rst`, `text/plain`).
    pub content_type: String,
    /// The long description: the body after the headers (or the old `Description:` header).
    pub description: String,
}

/// Reads a `METADATA` file (core metadata: RFC 822 headers, then the long description).
pub(crate) fn read_metadata(path: &Path) -> Option<Metadata> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_METADATA_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let (headers, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut metadata = Metadata {
        description: body.trim().to_string(),
        ..Metadata::default()
    };
    let mut old_description: Vec<&str> = Vec::new();
    let mut in_description = false;
    for line in headers.lines() {
        if in_description && (line.starts_with("        ") || line.starts_with("       |")) {
            old_description.push(line.get(8..).unwrap_or(""));
            continue;
        }
        in_description = false;
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        match key.to_ascii_lowercase().as_str() {
            "name" => metadata.name = value,
            "version" => metadata.version = value,
            "summary" => metadata.summary = value,
            "description-content-type" => metadata.content_type = value.to_ascii_lowercase(),
            "description" => {
                in_description = true;
                old_description.push(line[line.find(':').unwrap_or(0) + 1..].trim_start());
            }
            _ => {}
        }
    }
    if metadata.description.is_empty() && !old_description.is_empty() {
        metadata.description = old_description.join("\n").trim().to_string();
    }
    (!metadata.name.is_empty() && !metadata.version.is_empty()).then_some(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_headers_and_long_description() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("METADATA");
        std::fs::write(
            &path,
            "Metadata-Version: 2.1\nName: rich\nVersion: 13.9.4\nSummary: Render rich text\n\
             Description-Content-Type: text/markdown\n\n# Rich\n\nRich is a library.\n",
        )
        .unwrap();
        let m = read_metadata(&path).unwrap();
        assert_eq!((m.name.as_str(), m.version.as_str()), ("rich", "13.9.4"));
        assert_eq!(m.content_type, "text/markdown");
        assert!(m.description.starts_with("# Rich"));
        std::fs::write(
            &path,
            "Metadata-Version: 1.1\nName: old\nVersion: 0.1\nDescription: Old style\n        \
             =========\n        \n        Second line.\nPlatform: any\n",
        )
        .unwrap();
        let m = read_metadata(&path).unwrap();
        assert!(m.description.contains("Second line."), "{m:?}");
    }
}
