#!/usr/bin/env python3
"""Weight interpolation between the base and the fine-tuned model (WiSE-FT): every weight is
(1 - ALPHA) * base + ALPHA * tuned. Keeps more of the base model's general knowledge than the
fine-tuned end point; ALPHA is chosen on the dev halves.

    interpolate.py BASE_DIR TUNED_DIR OUT_DIR ALPHA

OUT_DIR gets TUNED_DIR's files with the interpolated model.safetensors (run
scripts/build-onnx-model.py OUT_DIR for its ONNX exports).
"""
import os
import shutil
import sys

from safetensors.numpy import load_file, save_file


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    base, tuned, out, alpha = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    b = load_file(os.path.join(base, "model.safetensors"))
    t = load_file(os.path.join(tuned, "model.safetensors"))
    # Names may differ by a "bert." prefix between exports.
    strip = lambda k: k[len("bert."):] if k.startswith("bert.") else k
    b = {strip(k): v for k, v in b.items()}
    mixed = {}
    for k, v in t.items():
        if v.dtype.kind == "f" and strip(k) in b:
            mixed[k] = ((1 - alpha) * b[strip(k)].astype("float32") + alpha * v.astype("float32")).astype(v.dtype)
        else:
            mixed[k] = v
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(tuned, out, ignore=shutil.ignore_patterns("onnx", "model.safetensors"))
    save_file(mixed, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    print(f"wrote {out} (alpha {alpha})")


if __name__ == "__main__":
    main()
