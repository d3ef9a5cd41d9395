//! A Rst page through the docs reader: parsing into blocks, chunking by heading with code
//! blocks whole and token counts, and the page's chunks as ingestion stores them.
#![no_main]

use std::collections::HashSet;

use devlens_docs::blocks::{self, Format};
use devlens_docs::chunk::chunk_page;
use devlens_docs::read::{Pages, add_page};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = blocks::parse(Format::Rst, text);
    let _ = chunk_page(&parsed, "fuzz");
    let mut pages = Pages::default();
    let mut seen = HashSet::new();
    add_page(
        &mut pages,
        &mut seen,
        "guide/fuzz.rst",
        "guide/fuzz.html",
        Format::Rst,
        text,
    );
});
