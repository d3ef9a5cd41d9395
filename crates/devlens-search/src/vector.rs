//! Exact nearest-neighbour search over L2-normalised vectors.
//!
//! A flat scan: for the corpora devlens indexes (thousands to tens of thousands of vectors of a
//! few hundred dimensions) one pass of dot products takes well under a millisecond, needs no
//! build step, and is exact. An ANN structure would only pay off far beyond that size.

/// A scored document: its position in the index and the cosine similarity to the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    pub doc: u64,
    pub score: f32,
}

/// Vectors of one dimensionality, stored contiguously (row-major).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorIndex {
    dims: usize,
    data: Vec<f32>,
}

impl VectorIndex {
    pub fn new(dims: usize) -> Self {
        Self {
            dims,
            data: Vec::new(),
        }
    }

    /// An index over `data` (row-major, `data.len()` a multiple of `dims`).
    pub fn from_flat(dims: usize, data: Vec<f32>) -> Option<Self> {
        (dims > 0 && data.len().is_multiple_of(dims)).then_some(Self { dims, data })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dims).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Appends a vector; it must have the index's dimensionality.
    pub fn push(&mut self, vector: &[f32]) -> bool {
        if vector.len() != self.dims {
            return false;
        }
        self.data.extend_from_slice(vector);
        true
    }

    pub fn get(&self, doc: usize) -> Option<&[f32]> {
        self.data.get(doc * self.dims..(doc + 1) * self.dims)
    }

    pub fn as_flat(&self) -> &[f32] {
        &self.data
    }

    /// The `limit` most similar vectors to `query`, best first. `keep` can exclude documents
    /// (filters); it is asked before scoring, so filtered-out documents cost nothing.
    pub fn search(
        &self,
        query: &[f32],
        limit: usize,
        keep: impl Fn(u64) -> bool,
    ) -> Vec<VectorHit> {
        if query.len() != self.dims || limit == 0 {
            return Vec::new();
        }
        let mut hits: Vec<VectorHit> = self
            .data
            .chunks_exact(self.dims)
            .enumerate()
            .filter(|(doc, _)| keep(*doc as u64))
            .map(|(doc, row)| VectorHit {
                doc: doc as u64,
                score: dot(row, query),
            })
            .collect();
        let by_score = |a: &VectorHit, b: &VectorHit| b.score.total_cmp(&a.score);
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, by_score);
            hits.truncate(limit);
        }
        hits.sort_by(by_score);
        hits
    }
}

/// Dot product in chunks of eight, which the compiler turns into SIMD lanes.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let chunks_a = a.chunks_exact(8);
    let chunks_b = b.chunks_exact(8);
    let tail: f32 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (ca, cb) in chunks_a.zip(chunks_b) {
        for i in 0..8 {
            lanes[i] += ca[i] * cb[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// `v` as stored in files and blobs: little-endian f32s, 4 bytes each.
pub fn to_le_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32s of bytes written by [`to_le_bytes`] (a trailing partial float is dropped).
pub fn from_le_bytes(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let mut v = v.to_vec();
        normalize(&mut v);
        v
    }

    #[test]
    fn nearest_first_and_filters_apply() {
        let mut index = VectorIndex::new(3);
        assert!(index.push(&unit(&[1.0, 0.0, 0.0])));
        assert!(index.push(&unit(&[0.7, 0.7, 0.0])));
        assert!(index.push(&unit(&[0.0, 0.0, 1.0])));
        assert!(!index.push(&[1.0, 2.0]));
        let q = unit(&[1.0, 0.1, 0.0]);
        let hits = index.search(&q, 2, |_| true);
        assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![0, 1]);
        let hits = index.search(&q, 5, |doc| doc != 0);
        assert_eq!(hits[0].doc, 1);
        assert_eq!(hits.len(), 2);
        assert!(index.search(&[1.0], 3, |_| true).is_empty());
    }

    #[test]
    fn vectors_read_back_as_written() {
        let v = [1.5f32, -0.25, f32::MIN_POSITIVE];
        let bytes = to_le_bytes(&v);
        assert_eq!(bytes.len(), 12);
        assert_eq!(from_le_bytes(&bytes).collect::<Vec<_>>(), v);
        assert_eq!(from_le_bytes(&bytes[..7]).count(), 1);
    }

    #[test]
    fn dot_matches_the_naive_sum_for_odd_lengths() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }
}
