//! A spec split over two files: `$ref`s from the root into a second document (and back), loaded
//! the way `devlens` loads a spec from disk (`SpecCache::load`): external documents, cycles
//! between them, JSON pointers into them, then endpoint details that follow refs across files.
//!
//! The input is the root document, then a line `---8<---`, then the second document, which is
//! written beside the root as `other.yaml`. Inputs that could make the loader leave the fuzz
//! folder (URLs, device files) are skipped: a fuzzer must not fetch from the network or read
//! the machine's files.

use std::path::PathBuf;
use std::sync::OnceLock;

use devlens_openapi::{SpecCache, SpecSource};

const SEPARATOR: &[u8] = b"\n---8<---\n";
const MAX_DETAILED: usize = 20;

struct Harness {
    runtime: tokio::runtime::Runtime,
    dir: PathBuf,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("devlens-fuzz-openapi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder for the spec files");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        Harness { runtime, dir }
    })
}

/// Whether the input could reach beyond the two files: a URL scheme, an absolute path into the
/// machine's special folders, or a parent-folder step.
fn leaves_the_folder(data: &[u8]) -> bool {
    let lower = data.to_ascii_lowercase();
    [
        &b"://"[..],
        b"http",
        b"file:",
        b"/dev",
        b"/proc",
        b"/sys",
        b"..",
        b"~",
    ]
    .iter()
    .any(|needle| lower.windows(needle.len()).any(|w| w == *needle))
}

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    if leaves_the_folder(data) {
        return;
    }
    let (root, other) = match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(at) => (&data[..at], &data[at + SEPARATOR.len()..]),
        None => (data, &b""[..]),
    };
    let h = harness();
    let root_path = h.dir.join("root.yaml");
    if std::fs::write(&root_path, root).is_err()
        || std::fs::write(h.dir.join("other.yaml"), other).is_err()
    {
        return;
    }
    // A fresh cache each time: the content-keyed cache would otherwise answer from memory.
    let cache = SpecCache::new();
    let Ok(spec) = h.runtime.block_on(cache.load(&SpecSource::File(root_path))) else {
        return;
    };
    crate::openapi_spec::render_details(&spec, MAX_DETAILED);
}
