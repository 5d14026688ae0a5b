"""The frame files of the sample stage: JPEGs written and read back."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tasks.sample.frames import read_rgb, write_jpeg


def _picture(seed: int, size: tuple[int, int] = (96, 64)) -> np.ndarray:
    """A smooth RGB picture (a JPEG keeps it within a few grey levels)."""
    ys, xs = np.mgrid[0 : size[1], 0 : size[0]]
    base = np.stack([xs * 2, ys * 3, (xs + ys + seed * 40) % 256], axis=2)
    return base.astype(np.uint8)


def test_a_written_jpeg_is_pillows_own_and_reads_back_as_the_picture(tmp_path: Path) -> None:
    picture = _picture(0)
    path = tmp_path / "0000000.jpg"
    write_jpeg(picture, path, quality=90)
    expected = io.BytesIO()
    Image.fromarray(picture).save(expected, format="JPEG", quality=90)
    assert path.read_bytes() == expected.getvalue()
    back = read_rgb(path)
    assert back.shape == picture.shape
    assert np.abs(back.astype(int) - picture).mean() < 3


def test_a_jpeg_written_over_a_larger_one_replaces_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "0000000.jpg"
    write_jpeg(_picture(1, (320, 240)), path, quality=95)
    write_jpeg(_picture(2), path, quality=50)
    assert read_rgb(path).shape == (64, 96, 3)
    assert path.read_bytes().endswith(b"\xff\xd9")  # nothing of the larger file after its end


@pytest.mark.parametrize("quality", [85, 90, 92])  # thumbnails, person frames, text frames
def test_a_jpeg_reads_back_as_the_pixels_pillow_decodes(tmp_path: Path, quality: int) -> None:
    rng = np.random.default_rng(quality)
    noisy = np.clip(_picture(3, (320, 180)) + rng.normal(0, 12, (180, 320, 3)), 0, 255)
    path = tmp_path / "0000000.jpg"
    write_jpeg(noisy.astype(np.uint8), path, quality=quality)
    with Image.open(path) as image:
        expected = np.asarray(image.convert("RGB"))
    np.testing.assert_array_equal(read_rgb(path), expected)


def test_a_missing_or_broken_jpeg_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_rgb(tmp_path / "none.jpg")
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a picture")
    with pytest.raises(OSError, match="not a readable JPEG"):
        read_rgb(broken)
