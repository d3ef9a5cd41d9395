//! What a cross-encoder reranker of ms-marco-MiniLM-L-6-v2's size costs a search here.
//!
//! ```text
//! cargo run --release -p devlens-embed --example rerank_latency -- MODEL_DIR [CANDIDATES]
//! ```
//!
//! No cross-encoder can be installed on this machine, so this builds one of the same shape from
//! the all-MiniLM-L6-v2 folder (`MODEL_DIR`: 6 layers, 384 wide — ms-marco-MiniLM-L-6-v2's
//! architecture) with a made-up classifier: its scores mean nothing, its cost is the real one.
//! Prints the median and p95 of reranking CANDIDATES (default 20) API-endpoint-like texts.

#![allow(clippy::unwrap_used)] // a measuring tool: a panic is a failed run

use std::path::Path;
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use devlens_embed::{CrossEncoder, Reranker};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = Path::new(
        args.get(1)
            .expect("usage: rerank_latency MODEL_DIR [CANDIDATES]"),
    );
    let candidates: usize = args.get(2).map_or(20, |n| n.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(model.join(file), dir.path().join(file)).unwrap();
    }
    let device = Device::Cpu;
    let mut tensors =
        candle_core::safetensors::load(model.join("model.safetensors"), &device).unwrap();
    let hidden = tensors["embeddings.word_embeddings.weight"].dim(1).unwrap();
    tensors.insert(
        "classifier.weight".into(),
        Tensor::ones((1, hidden), DType::F32, &device).unwrap(),
    );
    tensors.insert(
        "classifier.bias".into(),
        Tensor::zeros(1, DType::F32, &device).unwrap(),
    );
    candle_core::safetensors::save(&tensors, dir.path().join("model.safetensors")).unwrap();
    let reranker = CrossEncoder::load(dir.path()).unwrap();

    // Endpoint texts as the API search embeds them (~40–70 tokens each).
    let passages: Vec<String> = (0..candidates)
        .map(|i| {
            format!(
                "POST /v1/customers/{{customer}}/balance_transactions/{i}. Tags: customers. \
                 OperationId: PostCustomersCustomerBalanceTransactions{i}. Creates an immutable \
                 transaction that updates the customer's credit balance, applied to the next \
                 invoice that is finalized for the customer."
            )
        })
        .collect();
    let query = "give a customer store credit they can spend on their next invoice";
    reranker.score(query, &passages).await.unwrap(); // warm up
    let mut times = Vec::new();
    for _ in 0..30 {
        let started = Instant::now();
        reranker.score(query, &passages).await.unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "rerank {candidates} candidates: median {:.1} ms, p95 {:.1} ms (30 runs)",
        times[times.len() / 2],
        times[(times.len() * 95).div_ceil(100) - 1]
    );
}
