//! Behaviour on small fixture specs under `tests/fixtures/`: what a user (or an agent) sees in
//! tags, endpoint lists, details JSON, the text form and error messages.

use devlens_core::Report;
use devlens_core::outbound::OutboundPolicy;
use std::path::PathBuf;
use std::sync::Arc;

use devlens_openapi::{ApiSpec, EndpointRef, OpenApiError, SpecCache, SpecSource};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

async fn load(name: &str) -> Result<Arc<ApiSpec>, OpenApiError> {
    SpecCache::new()
        .load(&SpecSource::File(fixture(name)))
        .await
}

fn details(spec: &ApiSpec, id: &str) -> Value {
    let d = spec
        .endpoint_details(&EndpointRef::OperationId(id.into()))
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    serde_json::to_value(d).unwrap()
}

// ---------------------------------------------------------------- Swagger 2.0

#[tokio::test]
async fn swagger2_loads_as_openapi3() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    assert_eq!(spec.title, "Swagger Petstore");
    assert_eq!(spec.version, "1.0.6");
    assert_eq!(spec.spec_version, "2.0");
    assert_eq!(spec.servers(), vec!["https://petstore.example.com/v2"]);
    assert_eq!(spec.swagger_hash.len(), 64);

    let ops: Vec<String> = spec
        .operations()
        .iter()
        .map(|o| format!("{} {}", o.method, o.path))
        .collect();
    assert_eq!(
        ops,
        [
            "GET /pets",
            "POST /pets",
            "GET /pets/{petId}",
            "POST /pets/{petId}",
            "DELETE /pets/{petId}",
            "POST /pets/{petId}/uploadImage",
            "GET /nodes/{id}",
            "GET /health",
        ]
    );

    let tags = serde_json::to_value(spec.tags()).unwrap();
    assert_eq!(
        tags,
        json!([
            {"name": "pet", "description": "Everything about your pets", "endpoints": 6},
            {"name": "tree", "description": "Recursive structures", "endpoints": 1},
            {"name": "default", "description": null, "endpoints": 1}
        ])
    );
}

#[tokio::test]
async fn swagger2_body_parameter_becomes_the_request_body() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    let d = details(&spec, "addPet");
    assert_eq!(d["parameters"], json!([]));
    assert_eq!(
        d["requestBody"],
        json!({
            "contentType": "application/json",
            "required": true,
            "schema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The pet's name."},
                    "tag": {"type": "string", "nullable": true},
                    "category": {"type": "object", "properties": {
                        "id": {"type": "integer", "format": "int64"},
                        "name": {"type": "string"}
                    }},
                    "photoUrls": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["name"]
            },
            "description": "Pet object that needs to be added to the store"
        })
    );
    // allOf merged into one object; the success response carries the schema, errors do not.
    assert_eq!(
        d["responses"]["201"]["schema"]["properties"]["id"],
        json!({"type": "integer", "format": "int64"})
    );
    assert_eq!(
        d["responses"]["201"]["schema"]["required"],
        json!(["name", "id"])
    );
    assert_eq!(
        d["responses"]["405"],
        json!({"description": "Invalid input"})
    );
}

#[tokio::test]
async fn swagger2_form_data_with_a_file_is_multipart() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    let d = details(&spec, "uploadFile");
    assert_eq!(
        d["parameters"],
        json!([{"name": "petId", "in": "path", "required": true,
                "schema": {"type": "integer", "format": "int64"}, "description": null}])
    );
    assert_eq!(
        d["requestBody"],
        json!({
            "contentType": "multipart/form-data",
            "required": true,
            "schema": {"type": "object", "properties": {
                "additionalMetadata": {"type": "string", "description": "Additional data to pass to server"},
                "file": {"type": "string", "format": "binary", "description": "file to upload"}
            }, "required": ["file"]}
        })
    );

    let form = details(&spec, "updatePetWithForm");
    assert_eq!(
        form["requestBody"]["contentType"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(form["requestBody"]["required"], false);
}

#[tokio::test]
async fn swagger2_path_level_parameters_are_merged() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    let d = details(&spec, "deletePet");
    assert_eq!(d["deprecated"], true);
    assert_eq!(
        d["parameters"],
        json!([
            {"name": "petId", "in": "path", "required": true,
             "schema": {"type": "integer", "format": "int64", "minimum": 1},
             "description": "ID of the pet."},
            {"name": "api_key", "in": "header", "required": false,
             "schema": {"type": "string"}, "description": null}
        ])
    );
    assert_eq!(
        d["responses"],
        json!({"204": {"description": "Deleted"}, "404": {"description": "Pet not found"}})
    );
    // Not deprecated: the key is left out rather than false.
    assert!(details(&spec, "getPetById").get("deprecated").is_none());
}

#[tokio::test]
async fn swagger2_cycles_are_marked_not_followed() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    let d = details(&spec, "getNode");
    assert_eq!(
        d["responses"]["200"]["schema"],
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "parent": {"$cycle": "#/components/schemas/Node"},
            "children": {"type": "array", "items": {"$cycle": "#/components/schemas/Node"}}
        }, "required": ["name"]})
    );
    let text = spec
        .endpoint_details(&EndpointRef::OperationId("getNode".into()))
        .unwrap()
        .to_text();
    assert!(
        text.contains("200 → { name: string; parent?: ↺Node; children?: ↺Node[] }"),
        "{text}"
    );
}

#[tokio::test]
async fn swagger2_parameters_keep_bounds_defaults_and_array_items() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    let d = details(&spec, "listPets");
    assert_eq!(
        d["parameters"],
        json!([
            {"name": "limit", "in": "query", "required": false,
             "schema": {"type": "integer", "format": "int32", "default": 20, "maximum": 100},
             "description": "How many items to return at one time (max 100)"},
            {"name": "status", "in": "query", "required": false,
             "schema": {"type": "array", "items": {"type": "string", "enum": ["available", "pending", "sold"]}},
             "description": null}
        ])
    );
    // Success is 200; `default` is then just an error with a description.
    assert_eq!(d["responses"]["200"]["contentType"], "application/json");
    assert_eq!(d["responses"]["200"]["description"], "A page of pets.");
    assert_eq!(
        d["responses"]["default"],
        json!({"description": "Unexpected error"})
    );
}

#[tokio::test]
async fn text_form_is_compact_and_exact() {
    let spec = load("swagger2-petstore.json").await.unwrap();
    let text = spec
        .endpoint_details(&EndpointRef::method_path("post", "/pets"))
        .unwrap()
        .to_text();
    assert_eq!(
        text,
        "POST /pets  (addPet)\n\
         Add a new pet to the store\n\
         body (application/json, required): { name: string; tag?: string | null; \
         category?: { id?: integer(int64); name?: string }; photoUrls?: string[] }\n\
         201 → { name: string; tag?: string | null; category?: { id?: integer(int64); name?: string }; \
         photoUrls?: string[]; id: integer(int64); status?: \"available\" | \"pending\" | \"sold\" }\n\
         errors: 405\n"
    );
    let text = spec
        .endpoint_details(&EndpointRef::OperationId("listPets".into()))
        .unwrap()
        .to_text();
    assert!(
        text.contains(
            "params:\n  limit (query): integer(int32) = 20 — How many items to return at one time (max 100)\n  status (query): (\"available\" | \"pending\" | \"sold\")[]\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("errors: default\n"), "{text}");
    let health = spec
        .endpoint_details(&EndpointRef::OperationId("health".into()))
        .unwrap()
        .to_text();
    assert_eq!(health, "GET /health  (health)\n200 (text/plain) → string\n");
}

// ---------------------------------------------------------------- OpenAPI 3.0, multi-file

#[tokio::test]
async fn refs_into_other_files_are_bundled_at_load() {
    let spec = load("openapi30/petstore.yaml").await.unwrap();
    assert_eq!(spec.spec_version, "3.0.3");
    assert_eq!(spec.version, "2.1.0");
    let d = details(&spec, "showPetById");
    // pet.yaml's own `#/Category` resolves inside pet.yaml; `./common.yaml` next to it.
    assert_eq!(
        d["responses"]["200"]["schema"],
        json!({"type": "object", "properties": {
            "id": {"type": "integer", "format": "int64"},
            "name": {"type": "string", "description": "Name of the pet."},
            "category": {"type": "object", "properties": {
                "name": {"type": "string", "enum": ["dog", "cat", "bird"]}
            }},
            "owner": {"type": "object", "nullable": true, "properties": {"login": {"type": "string"}}}
        }, "required": ["id", "name"]})
    );
    assert_eq!(d["parameters"][0]["name"], "petId");
    assert_eq!(d["parameters"][0]["required"], true);
}

#[tokio::test]
async fn request_bodies_drop_read_only_and_list_other_content_types() {
    let spec = load("openapi30/petstore.yaml").await.unwrap();
    let d = details(&spec, "createPet");
    let body = &d["requestBody"];
    assert_eq!(body["contentType"], "application/json");
    assert_eq!(body["otherContentTypes"], json!(["application/xml"]));
    assert_eq!(body["required"], true);
    let props = body["schema"]["properties"].as_object().unwrap();
    assert!(!props.contains_key("id"), "readOnly id is not sent");
    assert!(props.contains_key("secret"), "writeOnly secret is sent");
    assert_eq!(body["schema"]["required"], json!(["name"]));
    // YAML's unquoted `201:` is the status "201"; writeOnly is not returned.
    let created = &d["responses"]["201"]["schema"]["properties"];
    assert!(created.get("secret").is_none());
    assert!(created.get("id").is_some());
    assert_eq!(
        d["responses"]["422"],
        json!({"description": "unexpected error"})
    );
}

#[tokio::test]
async fn lookups_forgive_slips_and_suggest() {
    let spec = load("openapi30/petstore.yaml").await.unwrap();
    let by = |m: &str, p: &str| {
        spec.find_operation(&EndpointRef::method_path(m, p))
            .map(|o| o.operation_id.clone().unwrap_or_default())
    };
    assert_eq!(by("get", "/pets/{petId}").unwrap(), "showPetById");
    assert_eq!(by("GET", "/pets/{id}/").unwrap(), "showPetById");
    assert_eq!(by("GET", "/pets/42").unwrap(), "showPetById");
    assert_eq!(by("GET", "/v1/pets/42").unwrap(), "showPetById");
    assert_eq!(
        by("GET", "https://api.example.com/v1/pets?limit=3").unwrap(),
        "listPets"
    );
    assert_eq!(
        spec.find_operation(&EndpointRef::OperationId("POST /pets".into()))
            .unwrap()
            .operation_id
            .as_deref(),
        Some("createPet")
    );

    let e = by("DELETE", "/pets/{petId}").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "no endpoint DELETE /pets/{petId}. Did you mean one of: `GET /pets/{petId}`, "
        ),
        "{e}"
    );
    let e = spec
        .find_operation(&EndpointRef::OperationId("showPet".into()))
        .unwrap_err();
    assert!(
        matches!(&e, OpenApiError::UnknownOperation { suggestions, .. } if suggestions.first().map(String::as_str) == Some("showPetById")),
        "{e}"
    );
    let e = spec.endpoints_by_tag("pet").unwrap_err().to_string();
    assert_eq!(e, "unknown tag `pet`. Did you mean `pets`?");
    assert_eq!(spec.endpoints_by_tag("PETS").unwrap().len(), 3);
}

// ---------------------------------------------------------------- OpenAPI 3.1

#[tokio::test]
async fn openapi31_type_arrays_and_const() {
    let spec = load("openapi31.json").await.unwrap();
    assert_eq!(spec.spec_version, "3.1.0");
    let d = details(&spec, "updateThing");
    assert_eq!(
        d["requestBody"]["contentType"],
        "application/merge-patch+json"
    );
    assert_eq!(
        d["requestBody"]["schema"],
        json!({"type": "object", "properties": {"label": {"type": ["string", "null"]}}})
    );
    assert_eq!(
        d["responses"]["200"]["schema"],
        json!({"type": "object", "description": "The thing, after the patch.", "properties": {
            "id": {"type": "string"},
            "kind": {"const": "thing"},
            "label": {"type": ["string", "null"]},
            "size": {"type": ["integer", "number"], "exclusiveMinimum": 0},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            "meta": {"type": "object", "additionalProperties": {"type": "string"}}
        }, "required": ["id", "kind"]})
    );
    let text = spec
        .endpoint_details(&EndpointRef::OperationId("updateThing".into()))
        .unwrap()
        .to_text();
    assert!(
        text.contains(
            "200 → { id: string; kind: \"thing\"; label?: string | null; size?: integer | number; \
             tags?: string[] | null; meta?: { [key: string]: string } }"
        ),
        "{text}"
    );
    assert!(
        text.contains("body (application/merge-patch+json): { label?: string | null }"),
        "{text}"
    );
    assert!(text.ends_with("errors: 404\n"), "{text}");
}

// ---------------------------------------------------------------- errors

#[tokio::test]
async fn malformed_json_names_line_and_column() {
    let e = load("malformed.json").await.unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, OpenApiError::Syntax { line: 5, .. }), "{msg}");
    assert!(msg.contains("malformed.json is not valid JSON"), "{msg}");
    assert!(msg.contains("line 5, column"), "{msg}");
}

#[tokio::test]
async fn malformed_yaml_names_line_and_column() {
    let e = load("malformed.yaml").await.unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, OpenApiError::Syntax { line: 11, .. }), "{msg}");
    assert!(msg.contains("malformed.yaml is not valid YAML"), "{msg}");
    assert!(msg.contains("line 11, column 8"), "{msg}");
}

#[tokio::test]
async fn documents_that_are_not_specs_are_named_as_such() {
    let msg = load("not-openapi.json").await.unwrap_err().to_string();
    assert!(
        msg.contains("is not an OpenAPI or Swagger document: an object with top-level keys `name`, `version`, `dependencies`"),
        "{msg}"
    );
}

#[tokio::test]
async fn missing_files_say_which_path() {
    let msg = load("nope/missing.yaml").await.unwrap_err().to_string();
    assert!(msg.starts_with("spec file not found: "), "{msg}");
    assert!(msg.contains("nope/missing.yaml"), "{msg}");
}

#[tokio::test]
async fn dangling_local_refs_are_marked_in_details() {
    let spec = load("unresolved-ref.yaml").await.unwrap();
    let d = details(&spec, "createOrder");
    assert_eq!(
        d["parameters"],
        json!([{"name": "Missing", "in": "unknown", "required": false,
                "schema": {"$unresolved": "#/components/parameters/Missing"}, "description": null}])
    );
    assert_eq!(
        d["requestBody"]["schema"]["properties"],
        json!({
            "item": {"type": "object", "properties": {"sku": {"type": "string"}}},
            "coupon": {"$unresolved": "#/components/schemas/DoesNotExist"}
        })
    );
}

#[tokio::test]
async fn a_missing_external_file_fails_the_load() {
    let msg = load("broken-external.yaml").await.unwrap_err().to_string();
    assert!(
        msg.starts_with("cannot resolve $ref `./schemas/missing.yaml#/Thing` in "),
        "{msg}"
    );
    assert!(msg.contains("broken-external.yaml"), "{msg}");
    assert!(
        msg.ends_with("fixtures/schemas/missing.yaml does not exist; fix the $ref or add the file"),
        "{msg}"
    );
}

#[tokio::test]
async fn unreachable_urls_name_the_url_without_secrets() {
    // Port 9 on loopback (allowed): nothing listens, the connection is refused at once.
    let src = SpecSource::parse("http://127.0.0.1:9/openapi.json?token=hunter2").unwrap();
    let allowed = OutboundPolicy::public_only().allowing("127.0.0.1:9");
    let msg = SpecCache::new()
        .load_with(&src, &allowed)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("cannot fetch http://127.0.0.1:9/openapi.json?token=***: "),
        "{msg}"
    );
    assert!(!msg.contains("hunter2"), "{msg}");
}

// ---------------------------------------------------------------- cache

#[tokio::test]
async fn same_content_shares_one_parsed_spec() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let bytes = std::fs::read(fixture("swagger2-petstore.json")).unwrap();
    std::fs::write(&a, &bytes).unwrap();
    std::fs::write(&b, &bytes).unwrap();
    let cache = SpecCache::new();
    let first = cache.load(&SpecSource::File(a.clone())).await.unwrap();
    let again = cache.load(&SpecSource::File(a.clone())).await.unwrap();
    let other_path = cache.load(&SpecSource::File(b)).await.unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    assert!(Arc::ptr_eq(&first, &other_path));

    // Changed content: a new spec with a new hash.
    let changed = String::from_utf8(bytes)
        .unwrap()
        .replace("\"1.0.6\"", "\"1.0.7\"");
    std::fs::write(&a, changed).unwrap();
    let reloaded = cache.load(&SpecSource::File(a)).await.unwrap();
    assert_eq!(reloaded.version, "1.0.7");
    assert_ne!(reloaded.swagger_hash, first.swagger_hash);
}

#[tokio::test]
async fn the_cache_keeps_the_eight_most_recent_specs() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SpecCache::new();
    let mut loaded = Vec::new();
    for i in 0..9 {
        let path = dir.path().join(format!("spec{i}.yaml"));
        let yaml = format!("openapi: 3.0.0\ninfo: {{title: t, version: '{i}'}}\npaths: {{}}\n");
        std::fs::write(&path, yaml).unwrap();
        let spec = cache.load(&SpecSource::File(path.clone())).await.unwrap();
        loaded.push((path, spec));
    }
    let (first_path, first) = &loaded[0];
    let (last_path, last) = &loaded[8];
    let last_again = cache
        .load(&SpecSource::File(last_path.clone()))
        .await
        .unwrap();
    assert!(Arc::ptr_eq(last, &last_again), "recent specs stay cached");
    let first_again = cache
        .load(&SpecSource::File(first_path.clone()))
        .await
        .unwrap();
    assert!(
        !Arc::ptr_eq(first, &first_again),
        "the oldest was dropped and parsed again"
    );
    assert_eq!(first_again.version, "0");
}

#[tokio::test]
async fn concurrent_loads_parse_once() {
    let cache = SpecCache::new();
    let src = SpecSource::File(fixture("openapi31.json"));
    let (a, b) = tokio::join!(cache.load(&src), cache.load(&src));
    assert!(Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
}

#[test]
fn from_bytes_hashes_the_raw_bytes() {
    let bytes = std::fs::read(fixture("openapi31.json")).unwrap();
    let spec = ApiSpec::from_bytes(&bytes, "openapi31.json").unwrap();
    assert_eq!(
        spec.swagger_hash,
        "18670449a825ef73e8c939ad2b80faf9e9c69d79a71dfac7747aafd7a7c644e9"
    );
}

// ---------------------------------------------------------------- Swagger 2.0 across files

#[tokio::test]
async fn swagger2_refs_into_other_files_are_inlined_and_keep_their_base() {
    let spec = load("swagger2-multifile/api.yaml").await.unwrap();
    assert_eq!(spec.servers(), vec!["/api"]);
    let list = details(&spec, "listPets");
    assert_eq!(
        list["parameters"],
        json!([{"name": "limit", "in": "query", "required": false,
                "schema": {"type": "integer", "default": 10}, "description": null}])
    );
    assert_eq!(
        list["responses"]["200"]["schema"]["items"],
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "photo": {"type": "string", "format": "binary"},
            "nickname": {"type": "string", "nullable": true}
        }, "required": ["name"]})
    );
    assert_eq!(
        list["responses"]["404"],
        json!({"description": "Not found"})
    );
    let create = details(&spec, "createPet");
    assert_eq!(create["requestBody"]["contentType"], "application/json");
    assert_eq!(create["requestBody"]["required"], true);
    assert_eq!(create["requestBody"]["schema"]["required"], json!(["name"]));
    // `#/CreatedBody` inside responses.yaml means responses.yaml, not the root document.
    assert_eq!(
        create["responses"]["201"]["schema"]["properties"]["pet"]["properties"]["name"],
        json!({"type": "string"})
    );
}

// ---------------------------------------------------------------- over HTTP

/// A tiny HTTP/1.1 server for the fixtures folder on 127.0.0.1, for loading specs by URL.
/// It counts requests, remembers the Accept headers, and stops when dropped (or after a minute).
struct FixtureServer {
    base: String,
    requests: Arc<std::sync::Mutex<Vec<String>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl FixtureServer {
    fn start() -> FixtureServer {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (log, stopped) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !stopped.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                };
                conn.set_nonblocking(false).unwrap();
                conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .unwrap();
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let accept = head
                    .lines()
                    .find_map(|l| l.strip_prefix("accept: ").or(l.strip_prefix("Accept: ")))
                    .unwrap_or("")
                    .to_string();
                log.lock().unwrap().push(format!("{path} | {accept}"));
                let path = path.split('?').next().unwrap_or("/");
                let (status, body) = match path {
                    "/evil.yaml" => (
                        "200 OK",
                        b"openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema:\n                $ref: 'file:///etc/hostname#/x'\n".to_vec(),
                    ),
                    p => match std::fs::read(fixture(p.trim_start_matches('/'))) {
                        Ok(bytes) => ("200 OK", bytes),
                        Err(_) => ("404 Not Found", b"not here".to_vec()),
                    },
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(&body);
            }
        });
        FixtureServer {
            base,
            requests,
            stop,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// The outbound guard's policy with this server allowed (it is on this machine).
    fn allowed(&self) -> OutboundPolicy {
        OutboundPolicy::public_only().allowing(&self.base)
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[tokio::test]
async fn specs_load_from_urls_with_relative_refs_and_a_one_minute_cache() {
    let server = FixtureServer::start();
    let cache = SpecCache::new();
    let src = SpecSource::parse(&format!("{}/openapi30/petstore.yaml", server.base)).unwrap();
    let spec = cache.load_with(&src, &server.allowed()).await.unwrap();
    assert_eq!(
        spec.source,
        format!("{}/openapi30/petstore.yaml", server.base)
    );
    let d = details(&spec, "showPetById");
    assert_eq!(
        d["responses"]["200"]["schema"]["properties"]["owner"]["properties"]["login"],
        json!({"type": "string"})
    );
    let requests = server.requests();
    let paths: Vec<&str> = requests
        .iter()
        .map(|r| r.split(" | ").next().unwrap_or(""))
        .collect();
    assert_eq!(
        paths,
        [
            "/openapi30/petstore.yaml",
            "/openapi30/schemas/pet.yaml",
            "/openapi30/schemas/common.yaml"
        ]
    );
    assert!(requests[0].contains("application/json") && requests[0].contains("yaml"));

    // Within a minute the same URL is served from the cache without a request.
    let again = cache.load_with(&src, &server.allowed()).await.unwrap();
    assert!(Arc::ptr_eq(&spec, &again));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn http_errors_and_remote_to_local_refs_are_refused() {
    let server = FixtureServer::start();
    let cache = SpecCache::new();
    let missing = SpecSource::parse(&format!("{}/nope.json", server.base)).unwrap();
    let msg = cache
        .load_with(&missing, &server.allowed())
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        format!(
            "{}/nope.json answered HTTP 404. Check the URL: the spec is not there.",
            server.base
        )
    );
    let evil = SpecSource::parse(&format!("{}/evil.yaml", server.base)).unwrap();
    let msg = cache
        .load_with(&evil, &server.allowed())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("a spec fetched over HTTP may not reference local files"),
        "{msg}"
    );
}
