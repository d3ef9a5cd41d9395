//! devlens' source map reader (crates/devlens-browser/src/records/sourcemap.rs, compiled in
//! here as it is) against the `sourcemap` crate on real maps: parse time, and where each says
//! generated positions came from.
//!
//! Usage: sourcemap-readers <map.json>...

#[allow(dead_code, unreachable_pub)]
#[path = "../../../crates/devlens-browser/src/records/sourcemap.rs"]
mod ours;

use std::time::Instant;

const PASSES: usize = 5;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..PASSES {
        let started = Instant::now();
        last = Some(f());
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    (median(times), last.expect("PASSES > 0"))
}

fn main() {
    println!(
        "| map | KB | segments | devlens parse ms | sourcemap parse ms | lookups | same answer | differ: column before the line's first mapping | differ: other |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).expect("a readable map");
        let (ours_ms, ours) = time(|| ours::SourceMap::parse(&text, "https://example.test/app.js"));
        let ours = ours.expect("devlens reads the map");
        let (theirs_ms, theirs) = time(|| sourcemap::SourceMap::from_slice(text.as_bytes()));
        let theirs = theirs.expect("the crate reads the map");

        let (mut lookups, mut same, mut before_first, mut other) = (0, 0, 0, 0);
        let mut shown = 0;
        for (line, segments) in ours.lines.iter().enumerate() {
            let line = line as u32;
            let first = segments.first().map(|s| s.column);
            // Column 0, each segment's column and the column after it (inside its range).
            let columns = std::iter::once(0)
                .chain(segments.iter().flat_map(|s| [s.column, s.column + 1]));
            for column in columns {
                lookups += 1;
                let a = ours.original(line, column).map(|p| {
                    (
                        ours.sources[p.source].clone(),
                        p.line,
                        p.column,
                        p.name,
                    )
                });
                let b = theirs.lookup_token(line, column).and_then(|t| {
                    // The crate answers with the closest earlier token, on an earlier line too.
                    let source = t.get_source()?.to_string();
                    Some((
                        source,
                        t.get_src_line(),
                        t.get_src_col(),
                        t.get_name().map(str::to_string),
                    ))
                });
                // Sources compare by their end: devlens resolves them to URLs against the map's.
                let agree = match (&a, &b) {
                    (Some(a), Some(b)) => {
                        a.0.ends_with(b.0.trim_start_matches("./").trim_start_matches("../"))
                            && (a.1, a.2, &a.3) == (b.1, b.2, &b.3)
                    }
                    (None, None) => true,
                    _ => false,
                };
                if agree {
                    same += 1;
                } else if first.is_none_or(|f| column < f) {
                    before_first += 1;
                } else {
                    other += 1;
                    if shown < 3 {
                        shown += 1;
                        eprintln!("{path} {line}:{column}: devlens {a:?}, sourcemap {b:?}");
                    }
                }
            }
        }
        let segments: usize = ours.lines.iter().map(Vec::len).sum();
        println!(
            "| {} | {} | {segments} | {ours_ms:.1} | {theirs_ms:.1} | {lookups} | {same} | {before_first} | {other} |",
            std::path::Path::new(&path)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(&path),
            text.len() / 1024,
        );
    }
}
