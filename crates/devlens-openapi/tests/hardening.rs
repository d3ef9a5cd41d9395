//! Inputs found by fuzzing (`scripts/fuzz`, docs/hardening.md) or while writing its targets:
//! each once made devlens panic, hang or exhaust memory, and must now get an answer or a clear
//! error.

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

use devlens_openapi::{OpenApiError, SpecCache, SpecSource};

/// A `$ref` to a device that never ends (`/dev/zero`) once read forever: its length on disk is
/// 0, so the size check passed. Reading stops one byte past the limit now.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_ref_to_an_endless_device_is_too_large_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("api.yaml");
    std::fs::write(
        &root,
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      \
         responses:\n        '200': {$ref: '/dev/zero#/r'}\n",
    )
    .unwrap();
    let err = SpecCache::new()
        .load(&SpecSource::File(root))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, OpenApiError::UnresolvedRef { reason, .. } if reason.contains("MB")),
        "{err}"
    );
}
