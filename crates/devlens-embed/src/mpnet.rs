//! The MPNet encoder (sentence-transformers/all-mpnet-base-v2 and its kin): Hugging Face's
//! `MPNetModel` on candle, sharing BERT's transformer layer (`bert.rs`). What differs from BERT:
//!
//! - no token type embeddings; positions count from `pad_token_id + 1` (RoBERTa's
//!   `create_position_ids_from_input_ids`: padding sits at `pad_token_id` itself);
//! - every layer adds one shared relative-position bias to its attention scores: T5-style
//!   buckets (32, bidirectional, log-spaced up to a distance of 128), one learned value per
//!   bucket and head (`encoder.relative_attention_bias`);
//! - other weight names (`attention.attn.{q,k,v,o}`, `attention.LayerNorm`).

use candle_core::{Module, Tensor};
use candle_nn::{Embedding, LayerNorm, VarBuilder};
use serde::Deserialize;

use crate::bert::{Act, Layer, LayerNames, Sizes, mask_bias};

/// Buckets of relative distance. Hugging Face's `MPNetEncoder.compute_position_bias` always
/// uses 32, whatever `relative_attention_num_buckets` says (which sizes the weight table).
const BUCKETS: i64 = 32;

/// Distances from here on share the last bucket.
const MAX_DISTANCE: i64 = 128;

/// The fields of a Hugging Face MPNet `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    #[serde(flatten)]
    pub sizes: Sizes,
    #[serde(default = "default_pad")]
    pub pad_token_id: usize,
    #[serde(default = "default_buckets")]
    pub relative_attention_num_buckets: usize,
}

// `MPNetConfig`'s defaults.
fn default_pad() -> usize {
    1
}

fn default_buckets() -> usize {
    32
}

impl Config {
    /// Tokens a text may have: positions start after `pad_token_id`.
    pub(crate) fn max_tokens(&self) -> usize {
        self.sizes
            .max_position_embeddings
            .saturating_sub(self.pad_token_id + 1)
    }
}

/// Hugging Face's `MPNetLayer`.
const MPNET_LAYER: LayerNames = LayerNames {
    query: "attention.attn.q",
    key: "attention.attn.k",
    value: "attention.attn.v",
    attn_out: "attention.attn.o",
    attn_norm: "attention.LayerNorm",
    ff_in: "intermediate.dense",
    ff_out: "output.dense",
    ff_norm: "output.LayerNorm",
};

pub(crate) struct MPNet {
    word: Embedding,
    position: Embedding,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    /// `(buckets, heads)`.
    relative_bias: Embedding,
    heads: usize,
    act: Act,
    pad_id: u32,
}

impl MPNet {
    /// Loads the weights (named as Hugging Face's `MPNetModel`, with or without an `mpnet.`
    /// prefix, as `MPNetForMaskedLM` saves them).
    pub(crate) fn load(vb: VarBuilder<'_>, config: &Config) -> candle_core::Result<Self> {
        if (config.relative_attention_num_buckets as i64) < BUCKETS {
            candle_core::bail!(
                "relative_attention_num_buckets {} is below the {BUCKETS} buckets MPNet uses",
                config.relative_attention_num_buckets
            );
        }
        let vb = if vb.contains_tensor("mpnet.embeddings.word_embeddings.weight") {
            vb.pp("mpnet")
        } else {
            vb
        };
        let sizes = &config.sizes;
        let (act, layers) = sizes.load_layers(&vb, &MPNET_LAYER)?;
        let (h, heads) = (sizes.hidden_size, sizes.num_attention_heads);
        let emb = vb.pp("embeddings");
        Ok(Self {
            word: candle_nn::embedding(sizes.vocab_size, h, emb.pp("word_embeddings"))?,
            position: candle_nn::embedding(
                sizes.max_position_embeddings,
                h,
                emb.pp("position_embeddings"),
            )?,
            embed_norm: candle_nn::layer_norm(h, sizes.layer_norm_eps, emb.pp("LayerNorm"))?,
            layers,
            relative_bias: candle_nn::embedding(
                config.relative_attention_num_buckets,
                heads,
                vb.pp("encoder.relative_attention_bias"),
            )?,
            heads,
            act,
            pad_id: config.pad_token_id as u32,
        })
    }

    /// Token vectors of the last layer, `(n, len, hidden)`, for `ids` of shape `(n, len)`.
    /// `mask` (`(n, len)`, 1 for tokens, 0 for padding) is `None` when nothing is padded.
    pub(crate) fn forward(
        &self,
        ids: &Tensor,
        mask: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        let (n, len) = ids.dims2()?;
        let positions = position_ids(&ids.to_vec2::<u32>()?, self.pad_id);
        let positions = Tensor::from_vec(positions, (n, len), ids.device())?;
        let x = self
            .word
            .forward(ids)?
            .add(&self.position.forward(&positions)?)?;
        let mut x = self.embed_norm.forward(&x)?;
        let position_bias = self.position_bias(len, ids.device())?;
        let mask_bias = mask.map(mask_bias).transpose()?;
        for layer in &self.layers {
            x = layer.forward(
                &x,
                Some(&position_bias),
                mask_bias.as_ref(),
                self.heads,
                self.act,
            )?;
        }
        Ok(x)
    }

    /// The relative-position bias for `len` tokens, `(1, heads, len, len)`: entry `[h, q, k]` is
    /// head `h`'s learned value for the bucket of `k - q`.
    fn position_bias(
        &self,
        len: usize,
        device: &candle_core::Device,
    ) -> candle_core::Result<Tensor> {
        let buckets: Vec<u32> = (0..len as i64)
            .flat_map(|q| (0..len as i64).map(move |k| relative_bucket(k - q)))
            .collect();
        let buckets = Tensor::from_vec(buckets, len * len, device)?;
        self.relative_bias
            .forward(&buckets)? // (len * len, heads)
            .t()?
            .contiguous()?
            .reshape((1, self.heads, len, len))
    }
}

/// Hugging Face's `create_position_ids_from_input_ids`: each token's position is `pad` plus its
/// count among the row's non-padding tokens; padding gets `pad`. Row-major, like `ids`.
fn position_ids(ids: &[Vec<u32>], pad: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(ids.iter().map(Vec::len).sum());
    for row in ids {
        let mut count = 0;
        out.extend(row.iter().map(|&id| {
            if id == pad {
                pad
            } else {
                count += 1;
                pad + count
            }
        }));
    }
    out
}

/// `MPNetEncoder.relative_position_bucket` for `relative = key position - query position`:
/// half the buckets for keys before the query, half for keys after; in each half, distances
/// below 8 get a bucket each, longer ones share log-spaced buckets up to [`MAX_DISTANCE`].
/// Computed in f32 like the reference, so the bucket edges (16, 32, 64) land where PyTorch's do.
fn relative_bucket(relative: i64) -> u32 {
    let half = BUCKETS / 2;
    let n = -relative;
    let side = if n < 0 { half } else { 0 };
    let n = n.abs();
    let max_exact = half / 2;
    let within = if n < max_exact {
        n
    } else {
        let log_ratio = (n as f32 / max_exact as f32).ln()
            / (MAX_DISTANCE as f32 / max_exact as f32).ln()
            * (half - max_exact) as f32;
        (max_exact + log_ratio as i64).min(half - 1)
    };
    (side + within) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_reference() {
        // Keys before the query (negative distance) in buckets 0..16, after it in 16..32.
        let cases = [
            (0, 0),
            (-1, 1),
            (-7, 7),
            (-8, 8),
            (-11, 8),
            (-12, 9),
            (-16, 10),
            (-31, 11),
            (-32, 12),
            (-64, 14),
            (-127, 15),
            (-128, 15),
            (-1000, 15),
            (1, 17),
            (7, 23),
            (8, 24),
            (16, 26),
            (32, 28),
            (64, 30),
            (500, 31),
        ];
        for (relative, want) in cases {
            assert_eq!(relative_bucket(relative), want, "distance {relative}");
        }
    }

    #[test]
    fn positions_start_after_the_padding_id_and_padding_keeps_it() {
        assert_eq!(
            position_ids(&[vec![0, 9, 9, 2], vec![0, 9, 2, 1]], 1),
            [2, 3, 4, 5, 2, 3, 4, 1]
        );
    }
}
