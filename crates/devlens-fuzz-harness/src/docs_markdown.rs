//! A Markdown page through the docs reader: parsing into blocks, chunking by heading with code
//! blocks whole and token counts, and the page's chunks as ingestion stores them.

use devlens_docs::blocks::Format;

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    crate::docs_page::read(Format::Markdown, "guide/fuzz.markdown", data);
}
