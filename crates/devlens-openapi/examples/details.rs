//! Prints an endpoint's details: `cargo run -p devlens-openapi --example details -- SPEC REF [--json]`
//! where REF is an operationId or `"GET /path"`.

use devlens_core::Report;
use devlens_openapi::{EndpointRef, SpecCache, SpecSource};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(spec), Some(r)) = (args.first(), args.get(1)) else {
        eprintln!("usage: details SPEC (operationId | \"METHOD /path\") [--json]");
        std::process::exit(2);
    };
    let result = async {
        let source = SpecSource::parse(spec)?;
        let spec = SpecCache::new().load(&source).await?;
        spec.endpoint_details(&EndpointRef::parse(r))
    }
    .await;
    match result {
        Ok(d) if args.iter().any(|a| a == "--json") => {
            println!("{}", serde_json::to_string_pretty(&d).unwrap_or_default());
        }
        Ok(d) => print!("{}", d.to_text()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
