//! The contract checks on the Shop fixture: traffic findings, call building, code samples.

use serde_json::{Value, json};

use devlens_contract::call::{Auth, CallArgs, CallTarget, KeyLocation, Secret, prepare_call};
use devlens_contract::sample::code_sample;
use devlens_contract::traffic::{Body, Exchange, TrafficOptions, TrafficReport, check_traffic};
use devlens_contract::{FindingKind, Side};
use devlens_openapi::{ApiSpec, EndpointRef};

fn shop() -> ApiSpec {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../devlens-openapi/tests/fixtures/shop.yaml"
    );
    ApiSpec::from_bytes(&std::fs::read(path).unwrap(), "shop.yaml").unwrap()
}

fn call(method: &str, url: &str, status: u16, body: Value) -> Exchange {
    Exchange {
        source: format!("{method} {url}"),
        method: method.into(),
        url: url.into(),
        resource_type: Some("Fetch".into()),
        status: Some(status),
        response_content_type: Some("application/json; charset=utf-8".into()),
        response_body: Some(Body {
            text: body.to_string(),
            truncated: false,
        }),
        ..Exchange::default()
    }
}

fn kinds(report: &TrafficReport, operation: &str) -> Vec<(FindingKind, String)> {
    report
        .operations
        .iter()
        .find(|o| o.operation_id.as_deref() == Some(operation))
        .unwrap_or_else(|| panic!("{operation} not in the report: {report:#?}"))
        .findings
        .iter()
        .map(|f| {
            (
                f.kind,
                f.pointer
                    .clone()
                    .or_else(|| f.parameter.clone())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn traffic_that_breaks_the_spec_is_named_by_operation_pointer_and_value() {
    let spec = shop();
    let page = "http://127.0.0.1:4000";
    let mut order = call(
        "POST",
        &format!("{page}/api/orders"),
        201,
        json!({"id": "o-1", "productId": 1, "quantity": 0, "total": 0}),
    );
    order.request_content_type = Some("application/json".into());
    order.request_body = Some(Body {
        text: json!({"productId": 1, "quantity": 0, "gift": true}).to_string(),
        truncated: false,
    });
    let exchanges = vec![
        Exchange {
            source: "page".into(),
            method: "GET".into(),
            url: format!("{page}/"),
            resource_type: Some("Document".into()),
            status: Some(200),
            response_content_type: Some("text/html".into()),
            ..Exchange::default()
        },
        call(
            "GET",
            &format!("{page}/api/products?limit=10&sort=price"),
            200,
            json!([
                {"id": 1, "name": "Lamp", "price": 20, "status": "available"},
                {"id": 2, "name": "Desk", "price": "99.00", "status": "discontinued", "discount": null}
            ]),
        ),
        call(
            "GET",
            &format!("{page}/api/products/7"),
            200,
            json!({"id": 7, "price": 5, "status": "available"}),
        ),
        call(
            "GET",
            &format!("{page}/api/products/999"),
            418,
            json!({"message": "teapot"}),
        ),
        order,
        call(
            "GET",
            &format!("{page}/api/cart"),
            200,
            json!({"items": [], "total": 0, "coupon": "SPRING"}),
        ),
        call(
            "GET",
            &format!("{page}/api/recommendations"),
            200,
            json!([]),
        ),
        call("DELETE", &format!("{page}/api/cart"), 204, Value::Null),
        call("GET", "https://cdn.example.net/lib.json", 200, json!({})),
    ];
    let report = check_traffic(
        &spec,
        &exchanges,
        &TrafficOptions {
            base_urls: Vec::new(),
            page_url: Some(format!("{page}/")),
        },
    );
    // The spec names production; the page's origin serves the same paths.
    assert!(
        report
            .bases
            .iter()
            .any(|b| b.contains("/api on the page's origin")),
        "{:?}",
        report.bases
    );
    assert_eq!(report.checked, 5);
    assert_eq!(
        kinds(&report, "listProducts"),
        vec![
            (FindingKind::UnknownParameter, "query.sort".to_string()),
            (FindingKind::WrongType, "/1/price".to_string()),
            (FindingKind::EnumValue, "/1/status".to_string()),
        ]
    );
    assert_eq!(
        kinds(&report, "getProduct"),
        vec![
            (FindingKind::MissingRequired, "/name".to_string()),
            (FindingKind::UndocumentedStatus, String::new()),
        ]
    );
    let order = kinds(&report, "createOrder");
    assert!(
        order.contains(&(FindingKind::ExtraField, "/gift".to_string())),
        "{order:?}"
    );
    assert!(
        order.contains(&(FindingKind::Constraint, "/quantity".to_string())),
        "{order:?}"
    );
    assert_eq!(
        kinds(&report, "getCart"),
        vec![(FindingKind::ExtraField, "/coupon".to_string())]
    );
    // The wrong type carries the value seen and the side.
    let list = &report
        .operations
        .iter()
        .find(|o| o.operation_id.as_deref() == Some("listProducts"))
        .unwrap();
    let price = list
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::WrongType)
        .unwrap();
    assert_eq!(price.seen.as_deref(), Some("\"99.00\""));
    assert_eq!(price.side, Side::Response);
    assert_eq!(price.status, Some(200));
    // Undocumented: a path no operation has, and a method the path does not document.
    let undocumented: Vec<(String, String, Vec<String>)> = report
        .undocumented
        .iter()
        .map(|u| {
            (
                u.method.clone(),
                u.path.clone(),
                u.documented_methods.clone(),
            )
        })
        .collect();
    assert_eq!(
        undocumented,
        vec![
            ("GET".to_string(), "/recommendations".to_string(), vec![]),
            (
                "DELETE".to_string(),
                "/cart".to_string(),
                vec!["GET".to_string()]
            ),
        ]
    );
    // The page and the CDN are not this API.
    assert_eq!(report.other_requests, 2);
    let text = devlens_core::Report::to_text(&report);
    assert!(text.contains("listProducts GET /products"), "{text}");
    assert!(text.contains("response 200 /1/status: value not in enum — one of [\"available\",\"sold-out\"]; seen \"discontinued\""), "{text}");
    assert!(
        text.contains("DELETE /cart — 1 call (204); the path is documented for GET only"),
        "{text}"
    );
}

#[test]
fn a_base_url_replaces_the_spec_servers() {
    let spec = shop();
    let exchanges = vec![
        call(
            "GET",
            "http://localhost:9000/v2/cart",
            200,
            json!({"items": [], "total": 1}),
        ),
        call(
            "GET",
            "http://localhost:9000/api/cart",
            200,
            json!({"items": [], "total": 1}),
        ),
    ];
    let report = check_traffic(
        &spec,
        &exchanges,
        &TrafficOptions {
            base_urls: vec!["http://localhost:9000/v2".into()],
            page_url: None,
        },
    );
    assert_eq!(report.checked, 1);
    assert_eq!(report.findings, 0);
    assert_eq!(report.other_requests, 1);
}

#[test]
fn secrets_in_bodies_never_show() {
    let spec = shop();
    let exchanges = vec![call(
        "GET",
        "http://127.0.0.1:4000/api/cart",
        200,
        json!({"items": [], "total": 0, "sessionToken": "abc", "debug": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"}),
    )];
    let report = check_traffic(
        &spec,
        &exchanges,
        &TrafficOptions {
            base_urls: vec![],
            page_url: Some("http://127.0.0.1:4000/".into()),
        },
    );
    let text = devlens_core::Report::to_text(&report);
    assert!(text.contains("/sessionToken: extra field"), "{text}");
    assert!(!text.contains("abc") && !text.contains("eyJ"), "{text}");
}

#[test]
fn calls_are_checked_before_they_are_built() {
    let spec = shop();
    let target = CallTarget {
        base_url: Some("http://127.0.0.1:4000/api".into()),
        auth: None,
        base_url_env: "DEVLENS_SHOP_BASE_URL".into(),
    };
    let bad = CallArgs {
        body: Some(json!({"quantity": "two", "colour": "red"})),
        ..CallArgs::default()
    };
    let err = prepare_call(
        &spec,
        &EndpointRef::OperationId("createOrder".into()),
        &bad,
        &target,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("POST /orders (createOrder)"), "{err}");
    assert!(
        err.contains("/quantity: wrong type — type integer; given \"two\""),
        "{err}"
    );
    assert!(err.contains("required field `productId`"), "{err}");
    assert!(err.contains("/colour: extra field"), "{err}");
    // The contract comes with the error, so the caller can fix the call in one go.
    assert!(
        err.contains("The endpoint's contract:") && err.contains("productId"),
        "{err}"
    );

    let unknown = CallArgs {
        params: serde_json::from_value(json!({"productid": 3})).unwrap(),
        ..CallArgs::default()
    };
    let err = prepare_call(
        &spec,
        &EndpointRef::OperationId("getProduct".into()),
        &unknown,
        &target,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("unknown parameter `productid` (it takes productId)"),
        "{err}"
    );
    assert!(
        err.contains("missing required path parameter `productId`"),
        "{err}"
    );

    let good = CallArgs {
        params: serde_json::from_value(json!({"limit": "5", "category": "lamps"})).unwrap(),
        ..CallArgs::default()
    };
    let prepared = prepare_call(
        &spec,
        &EndpointRef::OperationId("listProducts".into()),
        &good,
        &target,
    )
    .unwrap();
    assert_eq!(
        prepared.shown.url,
        "http://127.0.0.1:4000/api/products?limit=5&category=lamps"
    );
    assert_eq!(
        prepared.curl,
        "curl 'http://127.0.0.1:4000/api/products?limit=5&category=lamps' \\\n  -H 'Accept: application/json'"
    );
}

#[test]
fn credentials_are_shown_by_their_variable_only() {
    let spec = shop();
    let secret = |v: &str, var: &str| Secret::from_env_value(v.into(), var);
    for (auth, shown) in [
        (
            Auth::Bearer(secret("t0ps3cret", "SHOP_TOKEN")),
            "-H \"Authorization: Bearer $SHOP_TOKEN\"",
        ),
        (
            Auth::ApiKey {
                name: "key".into(),
                location: KeyLocation::Query,
                key: secret("t0ps3cret", "SHOP_KEY"),
            },
            "/whoami?key=$SHOP_KEY\"",
        ),
        (
            Auth::Basic {
                username: secret("ada", "SHOP_USER"),
                password: secret("t0ps3cret", "SHOP_PASS"),
            },
            "-u \"$SHOP_USER:$SHOP_PASS\"",
        ),
    ] {
        let target = CallTarget {
            base_url: Some("http://127.0.0.1:4000/api".into()),
            auth: Some(auth),
            base_url_env: String::new(),
        };
        let prepared = prepare_call(
            &spec,
            &EndpointRef::OperationId("whoAmI".into()),
            &CallArgs::default(),
            &target,
        )
        .unwrap();
        assert!(prepared.curl.contains(shown), "{}", prepared.curl);
        let everything = format!(
            "{}{:?}{}",
            prepared.curl,
            prepared.shown,
            serde_json::to_string(&prepared.shown).unwrap()
        );
        assert!(!everything.contains("t0ps3cret"), "{everything}");
    }
    // Without a base URL that the spec can give, the error says where to set one.
    let no_base = prepare_call(
        &spec,
        &EndpointRef::OperationId("getCart".into()),
        &CallArgs::default(),
        &CallTarget {
            base_url: None,
            auth: None,
            base_url_env: "DEVLENS_SHOP_BASE_URL".into(),
        },
    )
    .unwrap();
    assert!(
        no_base
            .shown
            .url
            .starts_with("https://shop.example.com/api/cart")
    );
}

#[test]
fn code_samples_are_typed_from_the_schemas() {
    let spec = shop();
    let sample = code_sample(
        &spec,
        &EndpointRef::OperationId("createOrder".into()),
        Some("http://127.0.0.1:4000/api"),
    )
    .unwrap();
    let ts = &sample.typescript;
    assert!(
        ts.contains("const BASE_URL = \"http://127.0.0.1:4000/api\";"),
        "{ts}"
    );
    assert!(ts.contains("export interface NewOrder {\n  productId: number;\n  quantity: number;\n  note?: string | null;\n}"), "{ts}");
    assert!(ts.contains("export interface Order {"), "{ts}");
    assert!(
        ts.contains(
            "export async function createOrder(body: NewOrder, init?: RequestInit): Promise<Order>"
        ),
        "{ts}"
    );
    assert!(ts.contains("body: JSON.stringify(body)"), "{ts}");
    assert!(
        sample
            .curl
            .contains("-X POST 'http://127.0.0.1:4000/api/orders'"),
        "{}",
        sample.curl
    );
    assert!(
        sample
            .curl
            .contains("--data-raw '{\"productId\":0,\"quantity\":0}'"),
        "{}",
        sample.curl
    );

    let list = code_sample(
        &spec,
        &EndpointRef::OperationId("listProducts".into()),
        None,
    )
    .unwrap();
    let ts = &list.typescript;
    assert!(ts.contains("category?: \"lamps\" | \"desks\";"), "{ts}");
    assert!(ts.contains("status: \"available\" | \"sold-out\";"), "{ts}");
    assert!(ts.contains("export async function listProducts(params: ListProductsParams = {}, init?: RequestInit): Promise<Product[]>"), "{ts}");
    assert!(
        ts.contains("if (params.limit !== undefined) query.set(\"limit\", String(params.limit));"),
        "{ts}"
    );

    let get = code_sample(&spec, &EndpointRef::OperationId("getProduct".into()), None).unwrap();
    assert!(
        get.typescript
            .contains("/products/${encodeURIComponent(String(params.productId))}"),
        "{}",
        get.typescript
    );
    assert!(
        get.curl
            .contains("https://shop.example.com/api/products/<productId>"),
        "{}",
        get.curl
    );
}
