//! The BERT encoder behind [`crate::LocalBert`]: candle tensors and matrix multiplies, with the
//! few changes that measurably pay on a CPU compared with `candle_transformers`' `BertModel`
//! (same arithmetic, same weights, same output to float rounding):
//!
//! - the exact GELU (`x/2 * (1 + erf(x/sqrt 2))`, what the model was trained with) computes
//!   `erf` with a branch-free rational approximation that compiles to SIMD, where candle calls
//!   the scalar `erf` per element (13% of a forward pass, measured);
//! - Q, K and V are one matrix multiply (weights concatenated at load time), with the attention
//!   scale folded into the query weights;
//! - a batch without padding (a single query) skips the attention mask.
//!
//! Only what sentence-transformers' BERT models use: absolute positions, no pooler.
//!
//! The transformer layer is shared with MPNet (`mpnet.rs`): the same arithmetic under other
//! weight names, plus the relative-position bias MPNet adds to every layer's attention scores.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, DType, InplaceOp1, Layout, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The fields of a Hugging Face BERT `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    #[serde(flatten)]
    pub sizes: Sizes,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default)]
    pub pad_token_id: usize,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

/// What every encoder's `config.json` says alike (BERT's and MPNet's): its sizes, activation
/// and LayerNorm epsilon.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Sizes {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
}

impl Sizes {
    /// The activation and the transformer layers under `encoder.layer.<i>` of `vb`, their
    /// weights named as `names` says; the hidden size must split into the heads.
    pub(crate) fn load_layers(
        &self,
        vb: &VarBuilder<'_>,
        names: &LayerNames,
    ) -> candle_core::Result<(Act, Vec<Layer>)> {
        let act = Act::parse(&self.hidden_act)?;
        let (h, heads) = (self.hidden_size, self.num_attention_heads);
        if heads == 0 || !h.is_multiple_of(heads) {
            candle_core::bail!("hidden size {h} does not split into {heads} heads");
        }
        let dims = LayerDims {
            hidden: h,
            intermediate: self.intermediate_size,
            heads,
            eps: self.layer_norm_eps,
        };
        let layers = (0..self.num_hidden_layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), dims, names))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok((act, layers))
    }
}

fn default_act() -> String {
    "gelu".into()
}

fn default_type_vocab() -> usize {
    2
}

fn default_eps() -> f64 {
    1e-12
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
    /// Exact, erf-based.
    Gelu,
    /// The tanh approximation (`gelu_new`, `gelu_pytorch_tanh`).
    GeluTanh,
    Relu,
}

pub(crate) struct Bert {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    act: Act,
}

impl Act {
    /// From `config.json`'s `hidden_act`.
    pub(crate) fn parse(name: &str) -> candle_core::Result<Self> {
        Ok(match name {
            "gelu" => Self::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Self::GeluTanh,
            "relu" => Self::Relu,
            other => candle_core::bail!("unsupported hidden_act {other:?}"),
        })
    }
}

/// The sizes a transformer layer is loaded with.
#[derive(Debug, Clone, Copy)]
struct LayerDims {
    hidden: usize,
    intermediate: usize,
    heads: usize,
    eps: f64,
}

/// Where a layer's weights sit under `encoder.layer.<i>`, per architecture.
pub(crate) struct LayerNames {
    pub query: &'static str,
    pub key: &'static str,
    pub value: &'static str,
    pub attn_out: &'static str,
    pub attn_norm: &'static str,
    pub ff_in: &'static str,
    pub ff_out: &'static str,
    pub ff_norm: &'static str,
}

/// Hugging Face's `BertLayer`.
const BERT_LAYER: LayerNames = LayerNames {
    query: "attention.self.query",
    key: "attention.self.key",
    value: "attention.self.value",
    attn_out: "attention.output.dense",
    attn_norm: "attention.output.LayerNorm",
    ff_in: "intermediate.dense",
    ff_out: "output.dense",
    ff_norm: "output.LayerNorm",
};

impl Bert {
    /// Loads the weights (named as Hugging Face's `BertModel`, with or without a `bert.` prefix).
    pub(crate) fn load(vb: VarBuilder<'_>, config: &Config) -> candle_core::Result<Self> {
        if let Some(kind) = config
            .position_embedding_type
            .as_deref()
            .filter(|k| *k != "absolute")
        {
            candle_core::bail!("unsupported position_embedding_type {kind:?}");
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let sizes = &config.sizes;
        let (act, layers) = sizes.load_layers(&vb, &BERT_LAYER)?;
        let (h, eps) = (sizes.hidden_size, sizes.layer_norm_eps);
        let emb = vb.pp("embeddings");
        Ok(Self {
            word: candle_nn::embedding(sizes.vocab_size, h, emb.pp("word_embeddings"))?,
            position: candle_nn::embedding(
                sizes.max_position_embeddings,
                h,
                emb.pp("position_embeddings"),
            )?,
            token_type: candle_nn::embedding(
                config.type_vocab_size,
                h,
                emb.pp("token_type_embeddings"),
            )?,
            embed_norm: candle_nn::layer_norm(h, eps, emb.pp("LayerNorm"))?,
            layers,
            heads: sizes.num_attention_heads,
            act,
        })
    }

    /// Token vectors of the last layer, `(n, len, hidden)`, for `ids`/`type_ids` of shape
    /// `(n, len)`. `mask` (`(n, len)`, 1 for tokens, 0 for padding) is `None` when nothing is
    /// padded.
    pub(crate) fn forward(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        mask: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        let x = self
            .word
            .forward(ids)?
            .add(&self.token_type.forward(type_ids)?)?
            .broadcast_add(&self.position.forward(&positions)?)?;
        let mut x = self.embed_norm.forward(&x)?;
        let bias = mask.map(mask_bias).transpose()?;
        for layer in &self.layers {
            x = layer.forward(&x, None, bias.as_ref(), self.heads, self.act)?;
        }
        Ok(x)
    }
}

/// The extended attention mask of Hugging Face's encoders, from `mask` (`(n, len)`, 1 for tokens,
/// 0 for padding): 0 where attended, the lowest float where padded, `(n, 1, 1, len)`.
pub(crate) fn mask_bias(mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(1)?.unsqueeze(1)?;
    (1.0 - mask)? * f32::MIN as f64
}

/// One transformer layer: self-attention, then the feed-forward block, each with a residual
/// connection and a post-LayerNorm.
pub(crate) struct Layer {
    /// `(3 * hidden, hidden)`: query (pre-scaled by `1/sqrt(head size)`), key, value.
    qkv: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    ff_in: Linear,
    ff_out: Linear,
    ff_norm: LayerNorm,
}

impl Layer {
    fn load(vb: VarBuilder<'_>, dims: LayerDims, names: &LayerNames) -> candle_core::Result<Self> {
        let LayerDims {
            hidden: h,
            intermediate: inter,
            heads,
            eps,
        } = dims;
        // The scale folded into the query is applied before any position bias is added, as in
        // both models' reference code.
        let scale = 1.0 / ((h / heads) as f64).sqrt();
        let part = |name: &str, factor: f64| -> candle_core::Result<(Tensor, Tensor)> {
            let w = vb.get((h, h), &format!("{name}.weight"))?;
            let b = vb.get(h, &format!("{name}.bias"))?;
            Ok(((w * factor)?, (b * factor)?))
        };
        let (qw, qb) = part(names.query, scale)?;
        let (kw, kb) = part(names.key, 1.0)?;
        let (vw, vbias) = part(names.value, 1.0)?;
        let qkv = Linear::new(
            Tensor::cat(&[&qw, &kw, &vw], 0)?,
            Some(Tensor::cat(&[&qb, &kb, &vbias], 0)?),
        );
        Ok(Self {
            qkv,
            attn_out: candle_nn::linear(h, h, vb.pp(names.attn_out))?,
            attn_norm: candle_nn::layer_norm(h, eps, vb.pp(names.attn_norm))?,
            ff_in: candle_nn::linear(h, inter, vb.pp(names.ff_in))?,
            ff_out: candle_nn::linear(inter, h, vb.pp(names.ff_out))?,
            ff_norm: candle_nn::layer_norm(h, eps, vb.pp(names.ff_norm))?,
        })
    }

    /// `position_bias` (`(1, heads, len, len)`: MPNet's relative positions) and `mask_bias`
    /// (`(n, 1, 1, len)`, see [`mask_bias`]) are added to the scaled attention scores, in that
    /// order, as Hugging Face does.
    pub(crate) fn forward(
        &self,
        x: &Tensor,
        position_bias: Option<&Tensor>,
        mask_bias: Option<&Tensor>,
        heads: usize,
        act: Act,
    ) -> candle_core::Result<Tensor> {
        let (n, len, h) = x.dims3()?;
        let hd = h / heads;
        let qkv = self.qkv.forward(x)?; // (n, len, 3h)
        let split = |i: usize| -> candle_core::Result<Tensor> {
            qkv.narrow(2, i * h, h)?
                .reshape((n, len, heads, hd))?
                .transpose(1, 2)?
                .contiguous() // (n, heads, len, hd)
        };
        let (q, k, v) = (split(0)?, split(1)?, split(2)?);
        let mut scores = q.matmul(&k.t()?)?; // (n, heads, len, len), already scaled
        if let Some(bias) = position_bias {
            scores = scores.broadcast_add(bias)?;
        }
        if let Some(bias) = mask_bias {
            scores = scores.broadcast_add(bias)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let ctx = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((n, len, h))?;
        let x = self
            .attn_norm
            .forward(&self.attn_out.forward(&ctx)?.add(x)?)?;
        let inter = self.ff_in.forward(&x)?;
        let inter = match act {
            Act::Gelu => {
                inter.inplace_op1(&GeluErf)?;
                inter
            }
            Act::GeluTanh => inter.gelu()?,
            Act::Relu => inter.relu()?,
        };
        self.ff_norm.forward(&self.ff_out.forward(&inter)?.add(&x)?)
    }
}

/// In place: the exact GELU with [`erf`], vectorised for the CPU's widest SIMD (pulp picks
/// AVX-512, AVX2 or SSE at run time).
struct GeluErf;

impl InplaceOp1 for GeluErf {
    fn name(&self) -> &'static str {
        "gelu-erf-simd"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("gelu: expected a contiguous tensor")
        };
        match storage {
            CpuStorage::F32(values) => {
                pulp::Arch::new().dispatch(GeluSlice(&mut values[start..end]));
                Ok(())
            }
            other => candle_core::bail!("gelu: expected f32, got {:?}", other.dtype()),
        }
    }
}

struct GeluSlice<'a>(&'a mut [f32]);

impl pulp::WithSimd for GeluSlice<'_> {
    type Output = ();

    // Inlined into pulp's per-ISA wrappers, so the loop is auto-vectorised for each of them.
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        for x in self.0.iter_mut() {
            *x = gelu(*x);
        }
    }
}

/// Exact GELU, `x * Φ(x)`.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `erf` for f32: the rational approximation on [-4, 4] that Eigen and XLA use (beyond it erf
/// is ±1 in f32); error a few ulps. Branch-free, so loops over it vectorise.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p + -2.101_024e-6;
    p = x2 * p + -5.692_506_4e-5;
    p = x2 * p + -7.349_906_3e-4;
    p = x2 * p + -2.954_6e-3;
    p = x2 * p + -1.609_603_3e-2;
    p *= x;
    let mut q = x2 * -1.456_607_2e-5 + -2.133_740_6e-4;
    q = x2 * q + -1.682_827e-3;
    q = x2 * q + -7.373_329e-3;
    q = x2 * q + -1.426_474e-2;
    p / q
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// erf to f64 precision: Taylor series for |x| < 3, erfc's continued fraction beyond.
    fn erf64(x: f64) -> f64 {
        if x.abs() < 3.0 {
            let (x2, mut term, mut sum) = (x * x, x, x);
            for n in 1..200 {
                term *= -x2 / n as f64;
                let add = term / (2 * n + 1) as f64;
                sum += add;
                if add.abs() < 1e-17 {
                    break;
                }
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            let a = x.abs();
            let mut f = 0.0;
            for k in (1..60).rev() {
                f = (k as f64 / 2.0) / (a + f);
            }
            let erfc = (-a * a).exp() / std::f64::consts::PI.sqrt() / (a + f);
            (1.0 - erfc).copysign(x)
        }
    }

    #[test]
    fn erf_is_accurate_to_float_precision() {
        let worst = (-60_000..=60_000)
            .map(|i| {
                let x = i as f64 / 10_000.0;
                (erf(x as f32) as f64 - erf64(x)).abs()
            })
            .fold(0f64, f64::max);
        assert!(worst < 5e-7, "max |erf error| {worst}");
    }

    #[test]
    fn the_simd_gelu_matches_the_exact_definition() {
        let xs: Vec<f32> = (-800..=800).map(|i| i as f32 / 100.0).collect();
        let t = Tensor::new(xs.as_slice(), &Device::Cpu).unwrap();
        t.inplace_op1(&GeluErf).unwrap();
        for (x, got) in xs.iter().zip(t.to_vec1::<f32>().unwrap()) {
            let want = 0.5 * *x as f64 * (1.0 + erf64(*x as f64 / 2f64.sqrt()));
            assert!(
                (got as f64 - want).abs() < 1e-6,
                "gelu({x}) = {got}, want {want}"
            );
        }
    }
}
