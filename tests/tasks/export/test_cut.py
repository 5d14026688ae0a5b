"""Re-encoded (redacted) clips: every source frame of the window, at its source time, as
rendered."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import av
import numpy as np
import pytest

from synthetic import lobby_scene, render_frame, scale_scene, write_video
from tasks.export.cut import Rgb, cut_clip

SCENE = replace(scale_scene(lobby_scene(), width=320, height=240, duration_s=6), noise=0.0)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clips") / "lobby.mp4"
    write_video(SCENE, path)
    return path


def _decoded(path: Path, start_s: float) -> list[tuple[float, Rgb]]:
    with av.open(str(path)) as container:
        return [
            (start_s + float(frame.pts * frame.time_base), frame.to_ndarray(format="rgb24"))
            for frame in container.decode(video=0)
        ]


def _psnr(a: Rgb, b: Rgb) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else 10 * np.log10(255.0**2 / mse)


def test_a_clip_holds_every_frame_of_its_window_at_its_source_time(
    source: Path, tmp_path: Path
) -> None:
    clip = cut_clip(source, (1.0, 3.0), tmp_path / "clip.mp4")

    expected = [i / SCENE.fps for i in range(SCENE.frame_count) if 1.0 <= i / SCENE.fps <= 3.0]
    assert clip.frame_times == pytest.approx(expected, abs=1e-6)
    frames = _decoded(clip.path, clip.start_s)
    assert [t for t, _ in frames] == pytest.approx(expected, abs=1e-3)
    for t, picture in frames:
        truth = render_frame(SCENE, round(t * SCENE.fps))
        assert _psnr(picture, truth) > 28, t  # the source frame at that time, re-encoded
    assert (clip.width, clip.height) == (SCENE.width, SCENE.height)


def test_a_transform_sees_each_frame_with_its_time_and_its_result_is_what_is_kept(
    source: Path, tmp_path: Path
) -> None:
    seen: list[float] = []

    def blank_left_half(picture: Rgb, t_s: float) -> Rgb:
        seen.append(t_s)
        out = picture.copy()
        out[:, : picture.shape[1] // 2] = 0
        return out

    clip = cut_clip(source, (2.0, 2.5), tmp_path / "clip.mp4", transform=blank_left_half)

    assert tuple(seen) == clip.frame_times
    for _, picture in _decoded(clip.path, clip.start_s):
        assert picture[:, : SCENE.width // 2 - 8].max() < 24  # black, but for codec noise
        assert picture[:, SCENE.width // 2 + 8 :].mean() > 40


def test_a_clip_is_scaled_to_even_sides_within_its_bound(source: Path, tmp_path: Path) -> None:
    clip = cut_clip(source, (0.0, 0.5), tmp_path / "small.mp4", max_side=101)
    assert (clip.width, clip.height) == (100, 76)
    assert _decoded(clip.path, 0.0)[0][1].shape == (76, 100, 3)


def test_a_window_outside_the_video_is_refused_and_leaves_nothing(
    source: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="no frame"):
        cut_clip(source, (60.0, 61.0), tmp_path / "none.mp4")
    assert list(tmp_path.iterdir()) == []
