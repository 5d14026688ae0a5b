"""The synthetic videos contain exactly what their ground truth says."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pytest

from synthetic import (
    Box,
    GroundTruth,
    MovingObject,
    SceneSpec,
    TextSign,
    demo_scene,
    ground_truth,
    lobby_scene,
    render_frame,
    scale_scene,
    write_video,
)

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Decoded:
    """A written lobby video decoded back, with its truth."""

    truth: GroundTruth
    frames: list[Image]
    times: list[float]
    fps: float
    duration_s: float
    codec: str
    pix_fmt: str


def decode(path: Path) -> tuple[list[Image], list[float]]:
    """Decode every frame of a video to RGB arrays and presentation times."""
    with av.open(str(path)) as container:
        decoded = list(container.decode(container.streams.video[0]))
    frames = [np.asarray(f.to_ndarray(format="rgb24"), dtype=np.uint8) for f in decoded]
    return frames, [float(f.time or 0.0) for f in decoded]


@pytest.fixture(scope="module")
def lobby(tmp_path_factory: pytest.TempPathFactory) -> Decoded:
    path = tmp_path_factory.mktemp("lobby") / "lobby.mp4"
    truth = write_video(lobby_scene(), path)
    frames, times = decode(path)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate or 0)
        duration = (container.duration or 0) / av.time_base
        codec, pix_fmt = stream.codec_context.name, str(stream.codec_context.pix_fmt)
    return Decoded(truth, frames, times, fps, duration, codec, pix_fmt)


def region(frame: Image, box: Box, grow: int = 0) -> Image:
    """Pixels of a box grown (or shrunk, if negative) by ``grow`` pixels."""
    x1, y1, x2, y2 = (int(v) for v in box)
    h, w = frame.shape[:2]
    y1, y2 = max(y1 - grow, 0), min(y2 + grow, h)
    x1, x2 = max(x1 - grow, 0), min(x2 + grow, w)
    return frame[y1:y2, x1:x2].reshape(-1, 3)


def box_mask(shape: tuple[int, ...], box: Box, grow: int = 0) -> npt.NDArray[np.bool_]:
    """Mask of a box grown by ``grow`` pixels on each side."""
    yy, xx = np.ogrid[0 : shape[0], 0 : shape[1]]
    x1, y1, x2, y2 = box
    return np.asarray((xx >= x1 - grow) & (xx < x2 + grow) & (yy >= y1 - grow) & (yy < y2 + grow))


def ring_mask(shape: tuple[int, ...], box: Box, inner: int, outer: int) -> npt.NDArray[np.bool_]:
    """Mask of the band between ``inner`` and ``outer`` pixels around a box."""
    return box_mask(shape, box, outer) & ~box_mask(shape, box, inner)


def colour_distance(pixels: Image, colour: tuple[int, int, int]) -> float:
    """Euclidean distance between the mean colour of pixels and a colour."""
    mean = pixels.astype(np.float64).mean(axis=0)
    return float(np.linalg.norm(mean - np.array(colour, np.float64)))


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_decoded_timing_matches_truth(lobby: Decoded) -> None:
    truth = lobby.truth
    assert (truth.frame_count, truth.duration_s, truth.fps) == (200, 20.0, 10)
    assert len(lobby.frames) == truth.frame_count
    assert lobby.times == pytest.approx([i / truth.fps for i in range(truth.frame_count)], abs=1e-6)
    assert lobby.fps == truth.fps
    assert lobby.duration_s == pytest.approx(truth.duration_s, abs=0.01)
    assert (lobby.codec, lobby.pix_fmt) == ("h264", "yuv420p")
    assert lobby.frames[0].shape == (240, 320, 3)


def test_objects_have_their_colour_inside_their_box_and_not_around(lobby: Decoded) -> None:
    checked = 0
    for obj in lobby.truth.objects:
        for index, box in list(obj.boxes.items())[::7]:
            if box[2] - box[0] < 10 or box[3] - box[1] < 10:
                continue  # mostly off-screen: too few pixels once edges are dropped
            frame = lobby.frames[index]
            assert colour_distance(region(frame, box, grow=-3), obj.color) < 25, (obj.name, index)
            around = frame[ring_mask(frame.shape, box, inner=3, outer=12)]
            assert colour_distance(around, obj.color) > 80, (obj.name, index)
            checked += 1
    assert checked >= 20


def test_object_colours_appear_only_inside_truth_boxes(lobby: Decoded) -> None:
    for index in range(0, lobby.truth.frame_count, 5):
        frame = lobby.frames[index].astype(np.int32)
        for obj in lobby.truth.objects:
            near = np.abs(frame - np.array(obj.color)).max(axis=2) < 40
            box = obj.box_at(index)
            if box is not None:
                near &= ~box_mask(frame.shape, box, grow=2)  # edges bleed in yuv420p
            assert near.sum() < 20, (obj.name, index, int(near.sum()))


def test_objects_and_signs_never_overlap() -> None:
    hd_minute = scale_scene(demo_scene(), width=1280, height=720, duration_s=60.0, fps=30)
    for spec in (lobby_scene(), demo_scene(), hd_minute):
        truth = ground_truth(spec)
        for index in range(truth.frame_count):
            boxes = [o.boxes[index] for o in truth.object_at(index)]
            boxes += [t.box for t in truth.texts_at(index)]
            for a, b in itertools.combinations(boxes, 2):
                assert not overlaps(a, b), (index, a, b)


def test_scene_cut_changes_the_background(lobby: Decoded) -> None:
    (cut,) = lobby.truth.cut_frames
    assert lobby.truth.scene_cuts == (12.0,) and cut == 120
    assert lobby.truth.segment_of(cut - 1) == 0 and lobby.truth.segment_of(cut) == 1

    def mean_abs_diff(i: int, j: int) -> float:
        keep = np.ones(lobby.frames[i].shape[:2], bool)
        for index in (i, j):
            for box in [o.boxes[index] for o in lobby.truth.object_at(index)]:
                keep[int(box[1]) : int(box[3]), int(box[0]) : int(box[2])] = False
        diff = np.abs(lobby.frames[i].astype(np.int16) - lobby.frames[j].astype(np.int16))
        return float(diff[keep].mean())

    assert mean_abs_diff(cut - 1, cut) > 25
    assert mean_abs_diff(cut - 2, cut - 1) < 4
    assert mean_abs_diff(cut, cut + 1) < 4
    assert mean_abs_diff(10, cut - 5) < 4  # static within a segment


def test_sign_plate_is_present_only_within_its_interval(lobby: Decoded) -> None:
    exit3 = next(t for t in lobby.truth.texts if t.text == "EXIT 3")
    assert (exit3.start_s, exit3.end_s) == (4.0, 9.0)
    for index, frame in enumerate(lobby.frames):
        pixels = region(frame, exit3.box).astype(np.int16)
        bright = float((pixels.min(axis=1) > 205).mean())
        ink = float((pixels.max(axis=1) < 70).mean())
        if exit3.start_s <= index / 10 <= exit3.end_s:
            assert bright > 0.5 and ink > 0.05, (index, bright, ink)
        else:
            assert bright < 0.05, (index, bright)
    lobby_sign = next(t for t in lobby.truth.texts if t.text == "LOBBY")
    assert (lobby_sign.start_s, lobby_sign.end_s) == (0.0, 19.9)
    assert all(len(lobby.truth.texts_at(i)) >= 1 for i in range(200))


def test_dwell_intervals_are_exactly_where_the_box_stands_still(lobby: Decoded) -> None:
    truth = lobby.truth
    assert truth.object_named("loiterer").dwell_intervals == ((3.5, 9.5),)
    assert truth.object_named("walker").dwell_intervals == ()
    assert truth.object_named("visitor").dwell_intervals == ()
    for obj in truth.objects:
        for index in sorted(obj.boxes)[:-1]:
            if index + 1 not in obj.boxes:
                continue
            still = obj.boxes[index] == obj.boxes[index + 1]
            in_dwell = obj.is_dwelling(index / 10) and obj.is_dwelling((index + 1) / 10)
            assert still == in_dwell, (obj.name, index)
    loiterer = truth.object_named("loiterer")
    (start, end) = loiterer.dwell_intervals[0]
    first, last = round(start * 10), round(end * 10)
    box = loiterer.boxes[first]
    means = [region(lobby.frames[i], box, grow=-3).mean(0) for i in (first, last)]
    assert float(np.abs(means[0] - means[1]).max()) < 6
    assert end - start >= 5.0


def test_visitor_appears_only_after_the_cut_and_walker_leaves(lobby: Decoded) -> None:
    truth = lobby.truth
    visitor = truth.object_named("visitor")
    assert visitor.first_seen_s > truth.scene_cuts[0]
    walker = truth.object_named("walker")
    assert walker.boxes[min(walker.boxes)][0] == 0.0  # enters from the left edge
    assert walker.boxes[max(walker.boxes)][2] == 320.0  # leaves at the right edge
    assert truth.object_at(0) == []


def test_write_video_returns_the_analytic_truth(lobby: Decoded) -> None:
    assert lobby.truth == ground_truth(lobby_scene())


def test_rendered_frames_survive_encoding(lobby: Decoded) -> None:
    spec = lobby_scene()
    for index in (0, 45, 119, 120, 160, 199):
        err = lobby.frames[index].astype(np.float64) - render_frame(spec, index)
        psnr = 10 * np.log10(255**2 / float(np.mean(err**2)))
        assert psnr > 30, (index, psnr)


def test_noise_is_deterministic_and_has_the_requested_strength() -> None:
    spec = lobby_scene(noise=4.0, seed=7)
    clean = render_frame(replace(spec, noise=0.0), 33).astype(np.float64)
    a, b = render_frame(spec, 33), render_frame(spec, 33)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, render_frame(replace(spec, seed=8), 33))
    assert not np.array_equal(
        a - clean, render_frame(spec, 34) - render_frame(replace(spec, noise=0.0), 34)
    )
    assert float(np.std(a - clean)) == pytest.approx(4.0, rel=0.15)


@pytest.mark.parametrize("suffix", [".mkv", ".ts", ".mov"])
def test_other_containers_keep_exact_timestamps(tmp_path: Path, suffix: str) -> None:
    spec = SceneSpec(fps=12, duration_s=2.0, objects=lobby_scene().objects[:1])
    truth = write_video(spec, tmp_path / f"clip{suffix}")
    _, times = decode(tmp_path / f"clip{suffix}")
    assert times == pytest.approx([i / 12 for i in range(truth.frame_count)], abs=2e-3)
    assert [p.name for p in tmp_path.iterdir()] == [f"clip{suffix}"]  # no partial file left


def test_bitrate_mode_hits_the_target(tmp_path: Path) -> None:
    spec = replace(lobby_scene(noise=3.0), duration_s=8.0, bitrate=400_000, scene_cuts=())
    spec = replace(spec, objects=spec.objects[:2], signs=spec.signs[:1])
    write_video(spec, tmp_path / "clip.mp4")
    bits_per_s = (tmp_path / "clip.mp4").stat().st_size * 8 / 8.0
    assert 200_000 < bits_per_s < 600_000


def test_demo_scene_is_a_bigger_lobby() -> None:
    truth = ground_truth(demo_scene())
    assert (truth.spec.width, truth.spec.height, truth.duration_s) == (640, 360, 30.0)
    assert [o.name for o in truth.objects] == ["walker", "loiterer", "visitor"]
    (dwell,) = truth.object_named("loiterer").dwell_intervals
    assert dwell[1] - dwell[0] >= 5.0
    assert truth.scene_cuts == (18.0,)
    assert truth.object_named("visitor").first_seen_s > 18.0


def test_scale_scene_keeps_the_story() -> None:
    spec = scale_scene(lobby_scene(), width=1280, height=720, duration_s=60.0, fps=30)
    truth = ground_truth(spec)
    assert (truth.frame_count, truth.scene_cuts) == (1800, (36.0,))
    assert truth.object_named("loiterer").dwell_intervals == ((10.5, 28.5),)
    assert [(t.start_s, t.end_s) for t in truth.texts][1] == (12.0, 27.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda: SceneSpec(width=321),
        lambda: SceneSpec(scene_cuts=(12.0,)),
        lambda: SceneSpec(scene_cuts=(5.0, 2.0)),
        lambda: SceneSpec(duration_s=1.0, scene_cuts=(0.99,)),
        lambda: MovingObject("x", (1, 2, 3), (4, 4), ((2.0, 0, 0), (1.0, 0, 0))),
        lambda: MovingObject("x", (1, 2, 300), (4, 4), ((0.0, 0, 0),)),
        lambda: TextSign("", 0.0, 1.0, (10, 10)),
        lambda: ground_truth(
            SceneSpec(objects=(MovingObject("x", (9, 9, 9), (4, 4), ((20.0, 5, 5),)),))
        ),
        lambda: ground_truth(SceneSpec(signs=(TextSign("HI", 30.0, 40.0, (50, 50)),))),
    ],
)
def test_inconsistent_specs_are_rejected(build: object) -> None:
    assert callable(build)
    with pytest.raises(ValueError):
        build()


def test_unknown_extension_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="extension"):
        write_video(SceneSpec(duration_s=0.5), tmp_path / "clip.avi2")
