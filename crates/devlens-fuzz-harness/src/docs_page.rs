//! What the three docs-page targets share: one page of a format through the docs reader.

use std::collections::HashSet;

use devlens_docs::blocks::Format;
use devlens_docs::chunk::chunk_page;
use devlens_docs::read::{self, Pages, add_page};

/// Parses `data` as a page of `format` stored at `path`, chunks it, and adds it as ingestion does.
pub(crate) fn read(format: Format, path: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = read::parse(format, text);
    let _ = chunk_page(&parsed, "fuzz");
    let mut pages = Pages::default();
    let mut seen = HashSet::new();
    add_page(&mut pages, &mut seen, path, "guide/fuzz.html", format, text);
}
