use devlens_openapi::{ApiSpec, EndpointRef};
use std::time::Instant;
fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let t = Instant::now();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let raw = t.elapsed();
        drop(v);
        let t = Instant::now();
        let spec = ApiSpec::from_bytes(&bytes, &path).unwrap();
        let load = t.elapsed();
        let t = Instant::now();
        let tags = spec.tags();
        for tag in &tags { spec.endpoints_by_tag(&tag.name).unwrap(); }
        let tagt = t.elapsed();
        let t = Instant::now();
        let mut n = 0; let mut chars = 0;
        for op in spec.operations() {
            let r = EndpointRef::method_path(&op.method, &op.path);
            let d = spec.endpoint_details(&r).unwrap();
            chars += d.to_text().len();
            n += 1;
        }
        let det = t.elapsed();
        let t = Instant::now();
        drop(spec);
        println!("{path}: raw parse {raw:?}, from_bytes {load:?}, tags {tagt:?} ({} tags), details {det:?} for {n} ops ({chars} chars), drop {:?}", tags.len(), t.elapsed());
    }
}
