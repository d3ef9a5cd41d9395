//! `POST /api/kb/sync` end to end against `devlens serve --http`, playing the extension: a first
//! sync pulls everything; what the extension creates, edits and deletes reaches the server;
//! what the server deletes reaches the extension; a solution edited on both sides keeps the
//! later edit and says so; vectors from the server's model are kept exactly as sent (nothing
//! embedded again), and those of another model are replaced by the server's own.

use crate::common;

use common::http::{self, Server, error, ok, send};

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

/// `offset` seconds from now with milliseconds, as the extension's `toISOString` writes it.
fn js_at(offset: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    devlens_core::clock::rfc3339((now + offset) as u64).replace('Z', ".500Z")
}

fn solution(id: &str, title: &str, text: &str, updated: &str, base: Option<&str>) -> Value {
    json!({
        "id": id, "title": title, "url": null, "text": text, "summary": null, "tags": [],
        "createdAt": updated, "updatedAt": updated, "base": base,
    })
}

fn body(model: &Value, dims: &Value, changes: Vec<Value>, known: Value) -> Value {
    json!({"model": model, "dims": dims, "changes": changes, "known": known, "wantVectors": !model.is_null()})
}

async fn sync(http: &Client, server: &Server, body: &Value) -> Value {
    ok(http.post(format!("{}/api/kb/sync", server.base)).json(body)).await
}

fn change<'a>(r: &'a Value, id: &str) -> Option<&'a Value> {
    r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
}

fn applied(r: &Value) -> Vec<u64> {
    ["created", "updated", "deleted", "unchanged"]
        .iter()
        .map(|k| r["applied"][k].as_u64().unwrap())
        .collect()
}

async fn create(http: &Client, server: &Server, title: &str, text: &str) -> Value {
    let (status, saved) = send(
        http.post(format!("{}/api/kb/solutions", server.base))
            .json(&json!({"title": title, "text": text})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{saved}");
    saved["solution"].clone()
}

#[tokio::test]
async fn the_extension_and_the_server_converge() {
    let dir = tempfile::tempdir().unwrap();
    let server = http::start(http::command(dir.path())).await;
    let http = http::client();
    let api = format!("{}/api/kb", server.base);
    let none = Value::Null;

    let a = create(
        &http,
        &server,
        "Fix CORS preflight",
        "Answer OPTIONS with the origin.",
    )
    .await;
    let b = create(
        &http,
        &server,
        "Center a div",
        "display: grid; place-items: center.",
    )
    .await;
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());

    // A first sync pulls everything.
    let first = sync(&http, &server, &body(&none, &none, vec![], json!({}))).await;
    assert_eq!(first["changes"].as_array().unwrap().len(), 2, "{first}");
    assert_eq!(change(&first, a_id).unwrap()["text"], a["text"]);
    assert_eq!(change(&first, b_id).unwrap()["updatedAt"], b["updatedAt"]);
    assert!(first["model"].is_null(), "no model on this server: {first}");
    assert!(first["serverTime"].as_str().unwrap().ends_with('Z'));

    // Created, edited and deleted in the extension.
    let created_at = js_at(-30);
    let edited_at = js_at(-20);
    let r = sync(
        &http,
        &server,
        &body(
            &none,
            &none,
            vec![
                solution("ext-made-1", "Debounce input", "Wait 300 ms.", &created_at, None),
                solution(
                    a_id,
                    "Fix CORS preflight",
                    "Answer OPTIONS with the exact origin and credentials.",
                    &edited_at,
                    a["updatedAt"].as_str(),
                ),
                json!({"id": b_id, "deleted": true, "updatedAt": js_at(-10), "base": b["updatedAt"]}),
            ],
            json!({}),
        ),
    )
    .await;
    assert_eq!(applied(&r), [1, 1, 1, 0], "{r}");
    assert!(r["conflicts"].as_array().unwrap().is_empty(), "{r}");
    assert!(change(&r, "ext-made-1").is_none() && change(&r, a_id).is_none());
    let made = ok(http.get(format!("{api}/solutions/ext-made-1"))).await;
    assert_eq!(
        (&made["title"], &made["createdAt"]),
        (&json!("Debounce input"), &json!(created_at))
    );
    let edited = ok(http.get(format!("{api}/solutions/{a_id}"))).await;
    assert_eq!(edited["updatedAt"], edited_at.as_str());
    assert!(edited["text"].as_str().unwrap().contains("exact origin"));
    error(
        http.get(format!("{api}/solutions/{b_id}")),
        StatusCode::NOT_FOUND,
    )
    .await;

    // Deleted on the server: the extension hears of it.
    ok(http.delete(format!("{api}/solutions/ext-made-1"))).await;
    let known = json!({a_id: edited_at, "ext-made-1": created_at});
    let r = sync(&http, &server, &body(&none, &none, vec![], known.clone())).await;
    let gone = change(&r, "ext-made-1").unwrap_or_else(|| panic!("{r}"));
    assert_eq!(gone["deleted"], true);
    assert!(gone["updatedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(r["changes"].as_array().unwrap().len(), 1, "{r}");

    // Edited on both sides: the later edit wins, and the conflict is noted.
    let server_edit = ok(http
        .put(format!("{api}/solutions/{a_id}"))
        .json(&json!({"text": "Edited on the server."})))
    .await;
    let server_time = server_edit["solution"]["updatedAt"].as_str().unwrap();
    let r = sync(
        &http,
        &server,
        &body(
            &none,
            &none,
            vec![solution(
                a_id,
                "Fix CORS preflight",
                "Edited in the extension, earlier.",
                &js_at(-5),
                Some(&edited_at),
            )],
            json!({}),
        ),
    )
    .await;
    assert_eq!(r["conflicts"][0]["kept"], "server", "{r}");
    assert_eq!(r["conflicts"][0]["id"], a_id);
    assert!(r["conflicts"][0]["why"].as_str().unwrap().contains("later"));
    let back = change(&r, a_id).unwrap();
    assert_eq!(back["text"], "Edited on the server.");
    assert_eq!(back["updatedAt"], server_time);

    let later = js_at(600);
    let r = sync(
        &http,
        &server,
        &body(
            &none,
            &none,
            vec![solution(
                a_id,
                "Fix CORS preflight",
                "Edited in the extension, later.",
                &later,
                Some(&edited_at),
            )],
            json!({}),
        ),
    )
    .await;
    assert_eq!(r["conflicts"][0]["kept"], "extension", "{r}");
    assert_eq!(applied(&r), [0, 1, 0, 0]);
    let now = ok(http.get(format!("{api}/solutions/{a_id}"))).await;
    assert_eq!(
        (&now["text"], &now["updatedAt"]),
        (&json!("Edited in the extension, later."), &json!(later))
    );

    // A bad change is rejected alone; a body that is no sync request is a 400.
    let r = sync(
        &http,
        &server,
        &body(
            &none,
            &none,
            vec![
                solution("not valid!", "x", "y", &js_at(0), None),
                solution("ext-made-2", "Fine", "Kept.", &js_at(0), None),
            ],
            json!({}),
        ),
    )
    .await;
    assert_eq!(r["rejected"][0]["id"], "not valid!", "{r}");
    assert_eq!(applied(&r), [1, 0, 0, 0]);
    let refused = error(
        http.post(format!("{api}/sync"))
            .json(&json!({"changes": "all of them"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(refused.contains("\"known\""), "{refused}");
}

fn encode(v: &[f32]) -> String {
    STANDARD.encode(v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
}

fn decode(v: &Value) -> Vec<f32> {
    STANDARD
        .decode(v.as_str().unwrap())
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

async fn serve_with_model(data_dir: &Path, model: &Path) -> Server {
    let mut cmd = http::command(data_dir);
    cmd.env("DEVLENS_MODEL_DIR", model);
    http::start(cmd).await
}

#[tokio::test]
async fn vectors_of_the_servers_model_are_kept_as_sent() {
    let Some(model_dir) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = serve_with_model(dir.path(), &model_dir).await;
    let http = http::client();
    let api = format!("{}/api/kb", server.base);
    create(
        &http,
        &server,
        "Debounce a search input",
        "Wait 300 ms after the last keystroke before sending the search request.",
    )
    .await;

    // The server says which model it embeds with; with that model its vectors come along.
    let hello = sync(
        &http,
        &server,
        &body(&Value::Null, &Value::Null, vec![], json!({})),
    )
    .await;
    let (model, dims) = (hello["model"].clone(), hello["dims"].clone());
    assert!(model.as_str().unwrap().contains("MiniLM"), "{hello}");
    let n = dims.as_u64().unwrap() as usize;
    assert!(
        hello["changes"][0].get("vectors").is_none(),
        "not asked for"
    );
    let with_vectors = sync(&http, &server, &body(&model, &dims, vec![], json!({}))).await;
    let theirs = &with_vectors["changes"][0]["vectors"]["chunks"];
    assert_eq!(decode(&theirs[0]["vector"]).len(), n, "{with_vectors}");

    // Vectors no model would compute, for the chunks the server cuts: kept exactly.
    let text = "Service workers keep serving the old bundle until every tab closes.";
    let ranges = devlens_kb::chunk::chunk_ranges(text, devlens_kb::chunk::TARGET_CHARS);
    assert_eq!(ranges, vec![0..text.len()]);
    let mut mine = vec![0.0f32; n];
    mine[0] = 0.6;
    mine[1] = 0.8;
    let vectors = json!({"chunks": [{"start": 0, "end": text.len(), "vector": encode(&mine)}]});
    let mut same_model = solution("ext-pwa-1", "PWA on an old release", text, &js_at(-2), None);
    same_model["vectors"] = vectors.clone();
    let mut other_model = solution(
        "ext-pwa-2",
        "PWA stuck after deploy",
        text,
        &js_at(-2),
        None,
    );
    other_model["vectors"] = vectors.clone();

    let r = sync(
        &http,
        &server,
        &body(&model, &dims, vec![same_model], json!({})),
    )
    .await;
    assert_eq!(applied(&r), [1, 0, 0, 0], "{r}");
    assert!(r["notice"].is_null(), "{r}");
    let r = sync(
        &http,
        &server,
        &body(
            &json!("some-org/another-model"),
            &dims,
            vec![other_model],
            json!({}),
        ),
    )
    .await;
    assert_eq!(applied(&r), [1, 0, 0, 0], "{r}");
    assert!(
        r["notice"].as_str().unwrap().contains("embeds them itself"),
        "{r}"
    );

    // The server embeds the other model's solution in the background.
    let mut status = Value::Null;
    for _ in 0..300 {
        status = ok(http.get(format!("{api}/status"))).await;
        if status["embedded"] == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        (&status["solutions"], &status["embedded"]),
        (&json!(3), &json!(3)),
        "{status}"
    );

    // A fresh extension gets the first as sent and the second as the server embedded it.
    let fresh = sync(&http, &server, &body(&model, &dims, vec![], json!({}))).await;
    let kept = &change(&fresh, "ext-pwa-1").unwrap()["vectors"]["chunks"];
    assert_eq!(kept.as_array().unwrap().len(), 1, "{fresh}");
    assert_eq!(
        (&kept[0]["start"], &kept[0]["end"]),
        (&json!(0), &json!(text.len()))
    );
    assert_eq!(decode(&kept[0]["vector"]), mine, "stored as sent");
    let embedded = &change(&fresh, "ext-pwa-2").unwrap()["vectors"]["chunks"];
    let server_vector = decode(&embedded[0]["vector"]);
    assert_eq!(server_vector.len(), n);
    assert_ne!(server_vector, mine, "another model's vectors are not used");

    // And a search by meaning finds it through the server's own vectors.
    let found = ok(http
        .post(format!("{api}/search"))
        .json(&json!({"query": "users stuck on an outdated service worker bundle", "topK": 3})))
    .await;
    let ids: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"ext-pwa-2"), "{found}");
}
