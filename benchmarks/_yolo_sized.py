"""A YOLO-nano-sized ONNX network with random weights, for measuring the ``yolo`` plugin's cost.

No real YOLO weights can be downloaded here, and what a detector costs depends on its size, not
on its weights. This builds a plain convolutional network with the Ultralytics signature (input
``[batch, 3, 640, 640]``, output ``[batch, 84, 8400]``: 4 box rows and 80 classes over the
80x80, 40x40 and 20x20 grids) and about 8 GFLOPs (YOLOv8n: 8.7), so onnxruntime does about the
work a YOLOv8n export makes it do. The class rows are biased low, so a handful of random boxes
pass the confidence threshold, as on a real frame, and NMS has realistic work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CLASSES = 80
GAIN, BIAS = 30.0, -4.5  # class logits about N(-4.5, 1): ~0.5 % of candidates pass 0.35

# (out channels, stride) per convolution; 3x3 kernels; SiLU after each.
_BACKBONE = [
    (16, 2),
    (32, 2),
    (32, 1),
    (32, 1),
    (32, 1),
    (64, 2),
    (64, 1),
    (64, 1),
    (64, 1),
    (64, 1),
    (128, 2),
    (128, 1),
    (128, 1),
    (128, 1),
    (128, 1),
    (256, 2),
    (256, 1),
]
_TAPS = {9: 8, 14: 16, 16: 32}  # backbone layer index -> grid stride it feeds the head from


class _Graph:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def conv(
        self, x: str, c_in: int, c_out: int, k: int, stride: int, name: str, gain: float = 1.0
    ) -> str:
        w = self.rng.normal(0, gain * (2.0 / (c_in * k * k)) ** 0.5, (c_out, c_in, k, k))
        self.weights.append(numpy_helper.from_array(w.astype(np.float32), f"{name}_w"))
        self.weights.append(numpy_helper.from_array(np.zeros(c_out, np.float32), f"{name}_b"))
        self.nodes.append(
            helper.make_node(
                "Conv",
                [x, f"{name}_w", f"{name}_b"],
                [name],
                kernel_shape=[k, k],
                strides=[stride, stride],
                pads=[k // 2] * 4,
            )
        )
        return name

    def silu(self, x: str) -> str:
        self.nodes.append(helper.make_node("Sigmoid", [x], [f"{x}_sig"]))
        self.nodes.append(helper.make_node("Mul", [x, f"{x}_sig"], [f"{x}_silu"]))
        return f"{x}_silu"

    def head(self, x: str, c_in: int, name: str) -> str:
        out = self.conv(x, c_in, 4 + CLASSES, 1, 1, name, gain=GAIN)
        bias = np.zeros((1, 4 + CLASSES, 1, 1), np.float32)
        bias[:, 4:] = BIAS  # classes mostly off: few candidates pass the threshold
        self.weights.append(numpy_helper.from_array(bias, f"{name}_bias"))
        self.nodes.append(helper.make_node("Add", [out, f"{name}_bias"], [f"{name}_biased"]))
        self.nodes.append(helper.make_node("Sigmoid", [f"{name}_biased"], [f"{name}_p"]))
        scale = np.ones((1, 4 + CLASSES, 1, 1), np.float32)
        scale[:, :4] = 640.0  # box rows in input pixels
        self.weights.append(numpy_helper.from_array(scale, f"{name}_scale"))
        self.nodes.append(helper.make_node("Mul", [f"{name}_p", f"{name}_scale"], [f"{name}_s"]))
        shape = numpy_helper.from_array(np.array([0, 4 + CLASSES, -1], np.int64), f"{name}_shape")
        self.weights.append(shape)
        self.nodes.append(
            helper.make_node("Reshape", [f"{name}_s", f"{name}_shape"], [f"{name}_r"])
        )
        return f"{name}_r"


def build_yolo_sized(path: Path, seed: int = 0) -> Path:
    """Write the network to ``path`` (dynamic batch) and return ``path``."""
    g = _Graph(seed)
    x, c_in, heads = "images", 3, []
    for i, (c_out, stride) in enumerate(_BACKBONE):
        x = g.silu(g.conv(x, c_in, c_out, 3, stride, f"conv{i}"))
        c_in = c_out
        if i in _TAPS:
            heads.append(g.head(x, c_out, f"head{_TAPS[i]}"))
    g.nodes.append(helper.make_node("Concat", heads, ["output0"], axis=2))
    graph = helper.make_graph(
        g.nodes,
        "yolo_sized",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, 640, 640])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, ["batch", 84, 8400])],
        g.weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    names = {i: f"class{i}" for i in range(CLASSES)}
    helper.set_model_props(model, {"names": repr(names)})
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path
