//! A source map as the debugger reads it: parsing (plain and index maps, `sourceRoot`, VLQ
//! mappings), source URLs resolved against the map's URL, and lookups both ways — generated to
//! original (what a paused page shows) and original to generated (what a breakpoint on
//! `src/cart.ts:12` sets).
//!
//! The input's first line is the map's URL; the rest is the map.

use devlens_browser::records::sourcemap::SourceMap;

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (map_url, map) = text
        .split_once('\n')
        .unwrap_or(("http://localhost/app.js.map", text));
    let Ok(map) = SourceMap::parse(map, map_url) else {
        return;
    };
    for (line, column) in [(0, 0), (0, u32::MAX), (1, 5), (u32::MAX, 0), (3, 17)] {
        let _ = map.original(line, column);
    }
    for source in 0..map.sources.len().min(8) {
        for line in [0, 1, 10, u32::MAX - 1, u32::MAX] {
            let _ = map.generated(source, line, None, 10);
            let _ = map.generated(source, line, Some(3), 10);
        }
    }
    let _ = map.generated(usize::MAX, 0, None, 10);
    for pattern in [
        "app.ts",
        "*",
        "",
        "/",
        "src/cart.ts",
        "http://localhost/src/a.ts",
    ] {
        let _ = map.find_source(pattern);
    }
    for source in map.sources.iter().take(4) {
        let _ = map.find_source(source);
    }
}
