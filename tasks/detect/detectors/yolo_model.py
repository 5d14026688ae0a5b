"""The ONNX side of the ``yolo`` detector: load an Ultralytics-style model, check it, run it.

Ultralytics exports a detection model with one input ``images`` ``[batch, 3, H, W]`` (float RGB in
0..1) and one output ``[batch, 4 + C, N]``: for each of ``N`` candidates, ``cx, cy, w, h`` in input
pixels, then one score per class. Anything else (a classifier, a segmentation model with a second
output, a file that is not ONNX) is refused with ``DetectorUnavailable`` when the model is loaded,
so the detect stage falls back to motion before it has looked at a single frame.

Loading ends with a WARM-UP run on a blank image. It proves the model actually runs on this
machine (a model can load and still lack a kernel for one of its ops), it reveals the class count
when the declared output shape leaves it symbolic, and it pays onnxruntime's one-off allocations
before the first real batch.

Class names come from a names file when one is given, else from the ``names`` metadata that
Ultralytics writes (a Python dict literal, read with ``ast.literal_eval``, never ``eval``), else
they are ``class0``, ``class1``... Every onnxruntime error is translated here, in one place.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from ves.errors import DetectorUnavailable

FloatArray = npt.NDArray[np.float32]

DEFAULT_SIDE = 640  # input side used when the model leaves H or W symbolic (Ultralytics' default)
_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


@dataclass(frozen=True)
class YoloModel:
    """A loaded, checked detection model.

    Attributes:
        session: the onnxruntime ``InferenceSession``.
        path: the ``.onnx`` file, for error messages.
        input_name: name of the image input.
        input_size: ``(H, W)`` the model takes.
        dynamic_batch: the batch dimension is symbolic, so several images can go in one run.
        class_names: one name per class score row of the output.
    """

    session: Any
    path: Path
    input_name: str
    input_size: tuple[int, int]
    dynamic_batch: bool
    class_names: tuple[str, ...] = ()

    def run(self, batch: FloatArray) -> FloatArray:
        """The raw output ``(B, 4 + C, N)`` for a ``(B, 3, H, W)`` batch.

        Raises:
            DetectorUnavailable: when onnxruntime fails or the output has another shape.
        """
        try:
            (output,) = self.session.run(None, {self.input_name: batch})
        # onnxruntime's errors (Fail, InvalidArgument, ...) derive straight from Exception.
        except Exception as exc:
            raise DetectorUnavailable(
                f"yolo model {self.path} failed while running: {exc}"
            ) from exc
        output = np.asarray(output, dtype=np.float32)
        if not self._fits(output, len(batch)):
            raise DetectorUnavailable(
                f"yolo model {self.path} gave an output of shape {output.shape} for"
                f" {len(batch)} images, not [batch, 4 + classes, boxes]"
            )
        return output

    def _fits(self, output: FloatArray, images: int) -> bool:
        """``output`` is ``[images, 4 + C, N]``, with ``C`` the class count once it is known."""
        if output.ndim != 3 or output.shape[0] != images or output.shape[1] < 5:
            return False
        return not self.class_names or output.shape[1] == 4 + len(self.class_names)


def load_model(model_path: Path, names_path: Path | None = None, threads: int = 1) -> YoloModel:
    """Open, check and warm up an Ultralytics-style detection model (see the module docstring).

    Args:
        model_path: the ``.onnx`` file.
        names_path: class names, one per line or a JSON list or ``{index: name}`` dict; wins
            over the model's own ``names`` metadata.
        threads: onnxruntime intra-op threads.

    Raises:
        DetectorUnavailable: when the file is missing, is not a readable ONNX model, does not
            have the detection signature, fails to run, or has names for another class count.
    """
    session = open_session(model_path, threads)
    input_name, size, dynamic = read_input(session, model_path)
    check_output(session, model_path)
    names = read_names_file(names_path) if names_path else names_from_metadata(session)
    model = YoloModel(session, model_path, input_name, size, dynamic)
    classes = model.run(np.zeros((1, 3, *size), dtype=np.float32)).shape[1] - 4
    names = names or tuple(f"class{i}" for i in range(classes))
    if len(names) != classes:
        raise DetectorUnavailable(
            f"yolo model {model_path} scores {classes} classes but {len(names)} class names"
            f" were given ({names_path or 'its names metadata'})"
        )
    return replace(model, class_names=names)


def open_session(path: Path, threads: int) -> Any:
    """An onnxruntime session on the CPU, or ``DetectorUnavailable`` saying why not."""
    if path == Path():
        raise DetectorUnavailable(
            "no yolo model is configured (set VES_YOLO_MODEL, or name one with yolo_model)"
        )
    if not path.is_file():
        raise DetectorUnavailable(f"yolo model {path} does not exist")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # one graph at a time; parallelism is within ops
    options.log_severity_level = 3  # errors only: they reach the caller as exceptions anyway
    try:
        return ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime's errors derive straight from Exception
        raise DetectorUnavailable(f"yolo model {path} is not a readable ONNX model: {exc}") from exc


def read_input(session: Any, path: Path) -> tuple[str, tuple[int, int], bool]:
    """Name, ``(H, W)`` and whether the batch is dynamic, of the one ``[B, 3, H, W]`` input."""
    inputs = session.get_inputs()
    shape = list(inputs[0].shape or []) if len(inputs) == 1 else []
    if len(shape) != 4 or shape[1] != 3 or inputs[0].type != "tensor(float)":
        described = [(i.name, i.type, i.shape) for i in inputs]
        raise DetectorUnavailable(
            f"yolo model {path} takes {described}, not one float [batch, 3, H, W] image input"
        )
    batch, _, height, width = shape
    if isinstance(batch, int) and batch != 1:
        raise DetectorUnavailable(f"yolo model {path} has a fixed batch of {batch}; export 1")
    return inputs[0].name, (_side(height), _side(width)), not isinstance(batch, int)


def _side(dimension: object) -> int:
    """A declared input side, or the default where it is symbolic."""
    return dimension if isinstance(dimension, int) and dimension > 0 else DEFAULT_SIDE


def check_output(session: Any, path: Path) -> None:
    """Refuse what cannot be one ``[B, 4 + C, N]`` output (the warm-up checks the rest)."""
    outputs = session.get_outputs()
    shape = outputs[0].shape if len(outputs) == 1 else []
    rank_ok = shape is None or len(shape) == 3
    rows_ok = rank_ok and (shape is None or not isinstance(shape[1], int) or shape[1] >= 5)
    if not rows_ok:
        described = [(o.name, o.shape) for o in outputs]
        raise DetectorUnavailable(
            f"yolo model {path} gives {described}, not one [batch, 4 + classes, boxes] output"
        )


def names_from_metadata(session: Any) -> tuple[str, ...]:
    """Class names from Ultralytics' ``names`` metadata, or ``()`` when there is none."""
    raw = session.get_modelmeta().custom_metadata_map.get("names")
    if raw is None:
        return ()
    try:
        value = ast.literal_eval(raw)
    except _LITERAL_ERRORS as exc:
        raise DetectorUnavailable(
            f"the yolo model's 'names' metadata is unreadable: {exc}"
        ) from exc
    return parse_names(value, "the yolo model's 'names' metadata")


def read_names_file(path: Path) -> tuple[str, ...]:
    """Class names from a file: one per line (blank lines ignored), or JSON list or dict."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DetectorUnavailable(f"cannot read the class names file {path}: {exc}") from exc
    source = f"the class names file {path}"
    if not text.lstrip().startswith(("[", "{")):
        return parse_names([line.strip() for line in text.splitlines() if line.strip()], source)
    try:
        return parse_names(json.loads(text), source)
    except json.JSONDecodeError as exc:
        raise DetectorUnavailable(f"{source} is not valid JSON: {exc}") from exc


def parse_names(value: object, source: str) -> tuple[str, ...]:
    """Names from a list, or from an ``{index: name}`` dict whose indices are 0..n-1.

    Raises:
        DetectorUnavailable: on anything else (``source`` says where it came from).
    """
    if isinstance(value, dict):
        by_index = {_index(key): name for key, name in value.items()}
        value = [by_index.get(i) for i in range(len(by_index))]
    if not isinstance(value, list | tuple) or not value:
        raise DetectorUnavailable(f"{source} holds no list or {{index: name}} dict of class names")
    if not all(isinstance(name, str) and name for name in value):
        raise DetectorUnavailable(f"{source} has class names that are not text, or missing ones")
    return tuple(value)


def _index(key: object) -> int:
    """A class index from a dict key (an int, or digits in a JSON key); -1 when it is neither."""
    if isinstance(key, int):
        return key
    return int(key) if isinstance(key, str) and key.isdigit() else -1
