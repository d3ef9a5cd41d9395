#!/usr/bin/env python3
"""Builds ONNX Runtime models of a Hugging Face BERT folder (all-MiniLM-L6-v2) without PyTorch.

    build-onnx-model.py MODEL_DIR            writes MODEL_DIR/onnx/model.onnx (float32) and
                                             MODEL_DIR/onnx/model_qint8.onnx (int8 weights)

The graph has the interface of the ONNX files on the Hugging Face hub
(sentence-transformers/all-MiniLM-L6-v2, `onnx/`): int64 inputs `input_ids`, `attention_mask`,
`token_type_ids` [batch, seq] and float output `last_hidden_state` [batch, seq, hidden], so devlens
reads either the same way (mean pooling and L2 normalisation happen in devlens). The weights come
from model.safetensors (read directly: the format is a JSON header and raw little-endian arrays).
The int8 model is ONNX Runtime's dynamic quantisation (8-bit weights per output channel, stored as
uint8 — see main() — with uint8 activations quantised per call), which runs on the VNNI dot-product instructions where the CPU
has them; its vectors stay within cosine 0.97 of the exact ones (the float32 model matches them
to 1e-6). (The tanh approximation of GELU made the int8 model 9% faster but cost retrieval
quality on the GitHub golden set — hybrid top-3 0.86 -> 0.84 — so both keep the exact GELU.) Needs the PyPI packages onnx, onnxruntime and numpy (scripts/install-onnxruntime).
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None}


def read_safetensors(path):
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] in ("I64", "I32"):
            continue  # buffers such as embeddings.position_ids, not weights
        dtype = DTYPES.get(info["dtype"])
        if dtype is None:
            sys.exit(f"{path}: tensor {name} has dtype {info['dtype']}; only F32/F16 are supported")
        start, end = info["data_offsets"]
        array = np.frombuffer(data[start:end], dtype=dtype).reshape(info["shape"])
        tensors[name] = array.astype(np.float32)
    # Some exports prefix every name with the model type.
    if all(k.startswith("bert.") for k in tensors):
        tensors = {k[len("bert."):]: v for k, v in tensors.items()}
    return tensors


def build(model_dir):
    config = json.load(open(os.path.join(model_dir, "config.json")))
    if config.get("model_type") != "bert":
        sys.exit(f"{model_dir}: model_type {config.get('model_type')!r}; only BERT models are supported")
    w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = config.get("layer_norm_eps", 1e-12)

    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x, prefix, out):
        weight = const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.copy())
        bias = const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return node("Add", [node("MatMul", [x, weight], f"{out}_mm"), bias], out)

    def layer_norm(x, prefix, out):
        gamma = w.get(f"{prefix}.weight", w.get(f"{prefix}.gamma"))
        beta = w.get(f"{prefix}.bias", w.get(f"{prefix}.beta"))
        return node(
            "LayerNormalization",
            [x, const(f"{prefix}.g", gamma), const(f"{prefix}.b", beta)],
            out,
            axis=-1,
            epsilon=eps,
        )

    # Embeddings: word + position + token type.
    word = node("Gather", [const("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids"], "word")
    shape = node("Shape", ["input_ids"], "ids_shape")
    seq_len = node("Gather", [shape, const("one_i64", np.array(1, dtype=np.int64))], "seq_len")
    positions = node(
        "Range",
        [const("zero_i64", np.array(0, dtype=np.int64)), seq_len, "one_i64"],
        "positions",
    )
    pos = node("Gather", [const("position_embeddings", w["embeddings.position_embeddings.weight"]), positions], "pos")
    types = node(
        "Gather",
        [const("token_type_embeddings", w["embeddings.token_type_embeddings.weight"]), "token_type_ids"],
        "types",
    )
    x = node("Add", [node("Add", [word, pos], "word_pos"), types], "emb_sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb")

    # The fused attention takes the raw 0/1 mask as int32 [batch, seq].
    mask = node("Cast", ["attention_mask"], "mask_i32", to=TensorProto.INT32)
    const("one_f", np.array(1.0, dtype=np.float32))

    sqrt2 = const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        # ONNX Runtime's fused attention (com.microsoft Attention): one op for the QKV projection,
        # the masked softmax and the head merge, which its dynamic quantisation turns into int8.
        qkv_w = np.concatenate(
            [w[f"{p}.attention.self.{n}.weight"].T for n in ("query", "key", "value")], axis=1
        )
        qkv_b = np.concatenate([w[f"{p}.attention.self.{n}.bias"] for n in ("query", "key", "value")])
        nodes.append(
            helper.make_node(
                "Attention",
                [x, const(f"l{i}_qkv_w", qkv_w), const(f"l{i}_qkv_b", qkv_b), mask],
                [f"l{i}_ctx"],
                name=f"l{i}_attention",
                domain="com.microsoft",
                num_heads=heads,
            )
        )
        ctx = f"l{i}_ctx"
        attn = linear(ctx, f"{p}.attention.output.dense", f"l{i}_attn")
        x = layer_norm(node("Add", [attn, x], f"l{i}_res1"), f"{p}.attention.output.LayerNorm", f"l{i}_ln1")
        h = linear(x, f"{p}.intermediate.dense", f"l{i}_ff1")
        # Exact GELU: x * 0.5 * (1 + erf(x / sqrt 2)) — the pattern ONNX Runtime fuses.
        erf = node("Erf", [node("Div", [h, sqrt2], f"l{i}_gd")], f"l{i}_erf")
        gate = node("Add", [erf, "one_f"], f"l{i}_ge")
        h = node("Mul", [node("Mul", [h, gate], f"l{i}_gm"), half], f"l{i}_gelu")
        h = linear(h, f"{p}.output.dense", f"l{i}_ff2")
        x = layer_norm(node("Add", [h, x], f"l{i}_res2"), f"{p}.output.LayerNorm", f"l{i}_ln2")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    int_input = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
    graph = helper.make_graph(
        nodes,
        "bert",
        [int_input("input_ids"), int_input("attention_mask"), int_input("token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], producer_name="devlens")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    model_dir = sys.argv[1]
    out_dir = os.path.join(model_dir, "onnx")
    os.makedirs(out_dir, exist_ok=True)
    fp32 = os.path.join(out_dir, "model.onnx")
    int8 = os.path.join(out_dir, "model_qint8.onnx")
    # Written beside and renamed, so an interrupted run never leaves a half file under the real name.
    onnx.save(build(model_dir), fp32 + ".tmp")
    os.replace(fp32 + ".tmp", fp32)

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # uint8 weights (the u8u8 kernels), not int8: on x86 without VNNI, ONNX Runtime multiplies
    # u8 activations by s8 weights with pmaddubsw, whose int16 pair sums saturate, so the same
    # model's vectors differed between this machine and the Chrome extension's WebAssembly build
    # (cosine 0.985-0.997); with u8u8 both do exact integer arithmetic (1.0 for most texts, the
    # rest ≥ 0.99: the float kernels between the layers still differ), and stay as close to the
    # float32 vectors (0.99); it costs ~19% of the native speed on AVX2.
    quantize_dynamic(
        fp32,
        int8 + ".tmp",
        weight_type=QuantType.QUInt8,
        per_channel=True,
        extra_options={"DefaultTensorType": TensorProto.FLOAT},
    )
    os.replace(int8 + ".tmp", int8)
    print(f"wrote {fp32} and {int8}")


if __name__ == "__main__":
    main()
