"""The yolo detector against KNOWN truth: a tiny real ONNX model that boxes red and blue pixels.

``tests.fixtures.onnx_models`` builds a model with the Ultralytics signature whose boxes are the
extents of saturated red and blue pixels, with a duplicate per colour that NMS must drop and a
junk candidate below the threshold. Frames are grey JPEGs with a red and a blue rectangle at known
places, so every box the detector returns can be checked to the pixel.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from tasks.detect.detectors.base import Detector, FrameView
from tasks.detect.detectors.yolo import (
    PAD_GREY,
    Region,
    YoloConfig,
    YoloDetector,
    boxes_to_frame,
    decode,
    letterbox,
    motion_region,
)
from tasks.detect.detectors.yolo_model import load_model, parse_names
from tasks.detections import Detections
from tests.fixtures.onnx_models import (
    build_colour_detector,
    build_wrong_rank_model,
    write_names,
)
from ves.errors import DetectorUnavailable

Frame = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]  # x1, y1, x2, y2 in frame pixels, x2 and y2 excluded

WIDTH, HEIGHT = 480, 270
GREY, RED, BLUE = (128, 128, 128), (255, 0, 0), (0, 0, 255)
RED_BOX: Box = (60, 50, 120, 110)
BLUE_BOX: Box = (300, 150, 400, 230)
TOLERANCE_PX = 2.0


# --- factories ---------------------------------------------------------------------------------


def scene(red: Box | None = RED_BOX, blue: Box | None = BLUE_BOX) -> Frame:
    """A grey ``WIDTH`` x ``HEIGHT`` RGB frame with a red and a blue rectangle (either optional)."""
    frame = np.full((HEIGHT, WIDTH, 3), GREY, dtype=np.uint8)
    for box, colour in ((red, RED), (blue, BLUE)):
        if box is not None:
            x1, y1, x2, y2 = box
            frame[y1:y2, x1:x2] = colour
    return frame


def normalised(box: Box) -> npt.NDArray[np.float64]:
    return np.array(box, dtype=np.float64) / [WIDTH, HEIGHT, WIDTH, HEIGHT]


def motion(index: int, *boxes: Box) -> Detections:
    """Motion rows of one frame (pixel boxes, normalised here)."""
    n = len(boxes)
    norm = np.array([normalised(b) for b in boxes]).reshape(-1, 4)
    scores, classes = np.ones(n, np.float32), np.zeros(n, np.int64)
    return Detections(
        norm, scores, classes, np.full(n, index, np.int64), np.full(n, index / 5, np.float32)
    )


MakeView = Callable[..., FrameView]


@pytest.fixture
def make_view(tmp_path: Path) -> MakeView:
    """``make_view(index, frame, refresh=..., motion=...)``: saves the JPEG, returns its view."""

    def make(
        index: int, frame: Frame, *, refresh: bool = False, motion: Detections | None = None
    ) -> FrameView:
        Image.fromarray(frame).save(tmp_path / f"{index:07d}.jpg", format="JPEG", quality=95)
        moved = motion if motion is not None else Detections.empty()
        return FrameView(index, index / 5, refresh, str(tmp_path), (160, 90), moved)

    return make


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the colour detector built three ways."""
    folder = tmp_path_factory.mktemp("models")
    build_colour_detector(folder / "fixed.onnx")
    build_colour_detector(folder / "dynamic.onnx", dynamic_batch=True)
    build_colour_detector(folder / "wide.onnx", (256, 384))
    build_colour_detector(folder / "anonymous.onnx", names_metadata=False)
    return folder


def detector(models: Path, name: str = "fixed", **options: Any) -> YoloDetector:
    return YoloDetector(YoloConfig(model_path=models / f"{name}.onnx", **options))


def assert_box(dets: Detections, class_name: str, truth: Box) -> None:
    """Exactly one box of ``class_name``, within ``TOLERANCE_PX`` of ``truth`` on each side."""
    rows = [i for i in range(len(dets)) if dets.class_of(i) == class_name]
    assert len(rows) == 1, f"expected one {class_name} box, got {len(rows)}"
    found = dets.boxes[rows[0]] * [WIDTH, HEIGHT, WIDTH, HEIGHT]
    np.testing.assert_allclose(found, truth, atol=TOLERANCE_PX)


# --- letterbox and mapping back ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("image_hw", "scale", "pad", "content"),
    [
        ((240, 320), 2.0, (0, 80), (slice(80, 560), slice(0, 640))),  # wide: bars top and bottom
        ((480, 240), 640 / 480, (160, 0), (slice(0, 640), slice(160, 480))),  # tall: left, right
        ((640, 640), 1.0, (0, 0), (slice(0, 640), slice(0, 640))),  # already the right size
    ],
)
def test_letterbox_scales_and_pads_centred_with_grey(
    image_hw: tuple[int, int], scale: float, pad: tuple[int, int], content: tuple[slice, slice]
) -> None:
    image = np.full((*image_hw, 3), 200, dtype=np.uint8)
    tensor, got_scale, got_pad = letterbox(image, (640, 640))
    assert tensor.shape == (3, 640, 640)
    assert tensor.dtype == np.float32
    assert got_scale == pytest.approx(scale)
    assert got_pad == pad
    border = np.ones((640, 640), dtype=bool)
    border[content] = False
    np.testing.assert_allclose(tensor[:, border], PAD_GREY / 255, rtol=1e-6)
    np.testing.assert_allclose(tensor[:, content[0], content[1]], 200 / 255, rtol=1e-6)


def test_boxes_to_frame_undoes_the_letterbox_of_a_region() -> None:
    region = Region(100, 40, 260, 160)  # a 160 x 120 crop of the frame
    _, scale, pad = letterbox(np.zeros((120, 160, 3), dtype=np.uint8), (640, 640))
    box_in_crop = np.array([10.0, 20.0, 50.0, 80.0])
    in_model = (box_in_crop * scale + [pad[0], pad[1], pad[0], pad[1]]).astype(np.float32)
    got = boxes_to_frame(in_model[None], scale, pad, region, (WIDTH, HEIGHT))
    np.testing.assert_allclose(got[0], normalised((110, 60, 150, 120)), atol=1e-6)


def test_boxes_to_frame_clips_to_the_region_the_model_saw() -> None:
    region = Region(0, 0, 100, 50)
    got = boxes_to_frame(
        np.array([[-20.0, -5.0, 300.0, 40.0]], np.float32), 1.0, (0, 0), region, (200, 100)
    )
    np.testing.assert_allclose(got[0], [0.0, 0.0, 0.5, 0.4])


# --- regions -----------------------------------------------------------------------------------


def test_a_small_motion_region_is_a_square_around_the_motion() -> None:
    moved = normalised((60, 50, 120, 110))[None].astype(np.float32)
    region = motion_region(moved, WIDTH, HEIGHT, fraction=0.4)
    side = 60 * 1.2 + 0.05 * HEIGHT
    assert region.x2 - region.x1 == pytest.approx(side, abs=1)
    assert region.y2 - region.y1 == pytest.approx(side, abs=1)
    assert region.x1 <= 60 and region.y1 <= 50 and region.x2 >= 120 and region.y2 >= 110


def test_a_region_near_the_edge_is_moved_inside_the_frame() -> None:
    moved = normalised((0, 250, 10, 270))[None].astype(np.float32)
    region = motion_region(moved, WIDTH, HEIGHT, fraction=0.4)
    assert (region.x1, region.y2) == (0, HEIGHT)
    assert region.x2 - region.x1 == region.y2 - region.y1 == round(0.25 * HEIGHT)


@pytest.mark.parametrize(
    ("boxes", "fraction"),
    [
        ([(10, 10, 30, 30), (400, 200, 470, 260)], 0.4),  # motion at both ends: union is large
        ([(60, 50, 120, 110)], 0.0),  # crops turned off
    ],
)
def test_a_large_motion_region_is_the_whole_frame(boxes: list[Box], fraction: float) -> None:
    moved = np.array([normalised(b) for b in boxes], dtype=np.float32)
    assert motion_region(moved, WIDTH, HEIGHT, fraction) == Region.whole(WIDTH, HEIGHT)


# --- decoding (NMS: tests/tasks/test_geometry.py) ----------------------------------------------


def candidates(*rows: tuple[float, float, float, float, float, float]) -> npt.NDArray[np.float32]:
    """An output ``(4 + 2, N)`` from rows ``(cx, cy, w, h, score0, score1)``."""
    return np.array(rows, dtype=np.float32).T


def test_decode_turns_centres_into_corners_and_keeps_the_best_class() -> None:
    output = candidates(
        (50, 40, 20, 10, 0.2, 0.7),  # class 1
        (10, 10, 4, 4, 0.35, 0.1),  # exactly at the threshold: kept
        (90, 90, 8, 8, 0.3, 0.34),  # below it
    )
    boxes, scores, class_ids = decode(output, confidence=0.35)
    np.testing.assert_allclose(boxes, [[40, 35, 60, 45], [8, 8, 12, 12]])
    np.testing.assert_allclose(scores, [0.7, 0.35])
    assert class_ids.tolist() == [1, 0]


def test_decode_of_nothing_above_the_threshold_is_empty() -> None:
    boxes, scores, class_ids = decode(candidates((5, 5, 2, 2, 0.1, 0.1)), confidence=0.5)
    assert boxes.shape == (0, 4) and len(scores) == len(class_ids) == 0


# --- loading -----------------------------------------------------------------------------------


def test_class_names_come_from_the_model_metadata(models: Path) -> None:
    model = load_model(models / "fixed.onnx")
    assert model.class_names == ("red", "blue")
    assert model.input_size == (640, 640)
    assert not model.dynamic_batch
    assert load_model(models / "dynamic.onnx").dynamic_batch


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("rouge\n\n  bleu  \n", ("rouge", "bleu")),  # one per line, blank lines ignored
        ('["rouge", "bleu"]', ("rouge", "bleu")),
        ('{"1": "bleu", "0": "rouge"}', ("rouge", "bleu")),
    ],
)
def test_a_names_file_wins_over_the_metadata(
    models: Path, tmp_path: Path, text: str, names: tuple[str, ...]
) -> None:
    path = tmp_path / "names.txt"
    path.write_text(text, encoding="utf-8")
    assert load_model(models / "fixed.onnx", names_path=path).class_names == names


def test_without_names_classes_are_numbered(models: Path) -> None:
    assert load_model(models / "anonymous.onnx").class_names == ("class0", "class1")


def test_a_names_file_for_another_class_count_is_refused(models: Path, tmp_path: Path) -> None:
    names = write_names(tmp_path / "names.txt", ("red", "blue", "green"))
    with pytest.raises(DetectorUnavailable, match="scores 2 classes but 3 class names"):
        load_model(models / "fixed.onnx", names_path=names)


@pytest.mark.parametrize(
    "value", [[], {0: "a", 2: "b"}, ["a", ""], ["a", 3], "a, b", {"x": "a"}, None]
)
def test_parse_names_refuses_what_is_not_a_list_of_names(value: object) -> None:
    with pytest.raises(DetectorUnavailable, match="somewhere"):
        parse_names(value, "somewhere")


def test_parse_names_reads_ultralytics_dicts() -> None:
    assert parse_names({1: "bicycle", 0: "person"}, "metadata") == ("person", "bicycle")


def junk_file(path: Path) -> Path:
    path.write_bytes(b"\x00\x01 this is not a protobuf \xff" * 10)
    return path


def names_file_that_is_a_folder(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.parametrize(
    ("make_model", "names", "message"),
    [
        (lambda d: d / "missing.onnx", None, "does not exist"),
        (lambda d: junk_file(d / "junk.onnx"), None, "not a readable ONNX model"),
        (
            lambda d: build_wrong_rank_model(d / "rank.onnx"),
            None,
            "not one \\[batch, 4 \\+ classes",
        ),
        (lambda d: build_colour_detector(d / "ok.onnx"), "missing.txt", "cannot read the class"),
    ],
    ids=["missing", "junk", "wrong-output-rank", "missing-names-file"],
)
def test_unusable_models_are_refused_as_unavailable(
    tmp_path: Path, make_model: Callable[[Path], Path], names: str | None, message: str
) -> None:
    config = YoloConfig(
        model_path=make_model(tmp_path), names_path=tmp_path / names if names else None
    )
    with pytest.raises(DetectorUnavailable, match=message):
        YoloDetector(config)


def test_a_failure_while_running_is_unavailable(
    models: Path, make_view: MakeView, monkeypatch: pytest.MonkeyPatch
) -> None:
    yolo = detector(models)

    def fail(*args: object) -> None:
        raise RuntimeError("out of memory")

    monkeypatch.setattr(yolo.model.session, "run", fail)
    with pytest.raises(DetectorUnavailable, match="failed while running: out of memory"):
        yolo.detect([make_view(0, scene(), refresh=True)])


# --- end to end --------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["fixed", "wide"])
def test_a_refresh_frame_is_searched_whole(models: Path, make_view: MakeView, model: str) -> None:
    yolo: Detector = detector(models, model)
    dets = yolo.detect([make_view(3, scene(), refresh=True)])
    assert len(dets) == 2  # the duplicates were suppressed, the junk was under the threshold
    assert dets.class_names == ("red", "blue")
    assert_box(dets, "red", RED_BOX)
    assert_box(dets, "blue", BLUE_BOX)
    assert dets.frame_index.tolist() == [3, 3]
    np.testing.assert_allclose(dets.t_s, 3 / 5)
    np.testing.assert_allclose(dets.scores, 0.9)


def test_a_motion_frame_is_searched_in_a_crop_mapped_back_to_the_frame(
    models: Path, make_view: MakeView
) -> None:
    red = (200, 120, 230, 140)  # small: 30 x 20 px, in the middle of the frame
    moved = motion(1, (195, 115, 235, 145))
    assert motion_region(moved.boxes, WIDTH, HEIGHT, 0.4) != Region.whole(WIDTH, HEIGHT)
    dets = detector(models).detect([make_view(1, scene(red=red), motion=moved)])
    assert dets.class_names == ("red", "blue")
    assert_box(dets, "red", red)
    assert [dets.class_of(i) for i in range(len(dets))] == ["red"]  # blue is outside the crop


def test_frames_without_motion_or_refresh_are_skipped(models: Path, make_view: MakeView) -> None:
    dets = detector(models).detect([make_view(0, scene()), make_view(1, scene())])
    assert len(dets) == 0
    assert dets.class_names == ("red", "blue")


def test_a_dynamic_batch_model_runs_frames_together_with_the_same_result(
    models: Path, make_view: MakeView, monkeypatch: pytest.MonkeyPatch
) -> None:
    views = [
        make_view(0, scene(), refresh=True),
        *(
            make_view(
                i,
                scene(red=(40 * i, 50, 40 * i + 60, 110)),
                motion=motion(i, (40 * i, 50, 40 * i + 60, 110)),
            )
            for i in range(1, 5)
        ),
        make_view(5, scene()),  # no motion: skipped
        make_view(6, scene(blue=None), motion=motion(6, (0, 0, WIDTH, HEIGHT))),
    ]
    results, calls = {}, {}
    for name in ("fixed", "dynamic"):
        yolo = detector(models, name, max_batch=4)
        calls[name] = count_runs(yolo, monkeypatch)
        results[name] = yolo.detect(views)
    assert (len(calls["fixed"]), len(calls["dynamic"])) == (6, 2)
    assert calls["dynamic"] == [4, 2]
    fixed, dynamic = results["fixed"], results["dynamic"]
    np.testing.assert_allclose(dynamic.boxes, fixed.boxes, atol=1e-6)
    np.testing.assert_allclose(dynamic.scores, fixed.scores)
    assert dynamic.class_ids.tolist() == fixed.class_ids.tolist()
    assert dynamic.frame_index.tolist() == [0, 0, 1, 2, 3, 4, 6]
    for i in range(1, 5):
        assert_box(dynamic.select(dynamic.frame_index == i), "red", (40 * i, 50, 40 * i + 60, 110))


def count_runs(yolo: YoloDetector, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap the detector's session: the list gets the batch size of every ``run``."""
    session = yolo.model.session
    real_run = session.run
    sizes: list[int] = []

    def run(outputs: Any, feeds: dict[str, Any], *args: Any) -> Any:
        sizes.append(len(next(iter(feeds.values()))))
        return real_run(outputs, feeds, *args)

    monkeypatch.setattr(session, "run", run)
    return sizes
