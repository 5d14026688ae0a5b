"""Byte surgery on media files: the damage a real upload carries, made on purpose.

Encoders only write well-formed files, so the hostile ones are made by editing bytes after the
fact: cutting a file short, flipping bits, and rewriting fields of an MP4's boxes (a ``moov`` that
lies about duration or size, a time-to-sample table whose every frame lasts 0 ticks).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"udta"}


@dataclass(frozen=True)
class Box:
    """One MP4 box: its four-character type, where it starts, its size and header length."""

    kind: bytes
    offset: int
    size: int
    header: int

    @property
    def body(self) -> int:
        return self.offset + self.header


def boxes(data: bytes | bytearray, start: int = 0, end: int | None = None) -> Iterator[Box]:
    """Every box from ``start`` to ``end``, descending into the container boxes."""
    end = len(data) if end is None else end
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[at + 8 : at + 16])[0], 16
        elif size == 0:
            size = end - at
        if size < header:
            return
        box = Box(kind, at, size, header)
        yield box
        if kind in _CONTAINERS:
            yield from boxes(data, box.body, min(at + size, end))
        at += size


def find(data: bytes | bytearray, kind: bytes) -> list[Box]:
    """Every box of one type, in file order."""
    return [box for box in boxes(data) if box.kind == kind]


def truncate(source: Path, dest: Path, fraction: float) -> None:
    """The first ``fraction`` of ``source``'s bytes."""
    data = source.read_bytes()
    dest.write_bytes(data[: int(len(data) * fraction)])


def flip_bits(source: Path, dest: Path, span: tuple[float, float], count: int, seed: int) -> None:
    """``count`` random bits flipped between the ``span`` fractions of the file (seeded)."""
    data = bytearray(source.read_bytes())
    rng = random.Random(seed)
    first, last = int(len(data) * span[0]), max(int(len(data) * span[1]), int(len(data) * span[0]))
    for _ in range(count):
        at = rng.randrange(first, last + 1) if last > first else first
        data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
    dest.write_bytes(bytes(data))


def _duration_field(box: Box, data: bytearray) -> tuple[int, str]:
    """Offset and struct format of a ``mvhd``/``mdhd``/``tkhd`` duration (versions 0 and 1)."""
    version = data[box.body]
    if box.kind == b"tkhd":
        return (box.body + 28, ">Q") if version else (box.body + 20, ">I")
    return (box.body + 24, ">Q") if version else (box.body + 16, ">I")


def scale_durations(source: Path, dest: Path, factor: int) -> None:
    """Every duration the ``moov`` declares (movie, tracks, media) multiplied by ``factor``."""
    data = bytearray(source.read_bytes())
    for box in [*find(data, b"mvhd"), *find(data, b"tkhd"), *find(data, b"mdhd")]:
        at, fmt = _duration_field(box, data)
        (value,) = struct.unpack_from(fmt, data, at)
        struct.pack_into(fmt, data, at, min(value * factor, 0xFFFFFFFF))
    dest.write_bytes(bytes(data))


def oversize_moov(source: Path, dest: Path) -> None:
    """The ``moov`` box claims to be far larger than the file (4 GiB - 1 bytes)."""
    data = bytearray(source.read_bytes())
    struct.pack_into(">I", data, find(data, b"moov")[0].offset, 0xFFFFFFFF)
    dest.write_bytes(bytes(data))


def zero_frame_durations(source: Path, dest: Path) -> None:
    """Every ``stts`` entry says its frames last 0 ticks: no frame rate, every frame at 0 s."""
    data = bytearray(source.read_bytes())
    for box in find(data, b"stts"):
        (entries,) = struct.unpack_from(">I", data, box.body + 4)
        for i in range(entries):
            struct.pack_into(">I", data, box.body + 8 + 8 * i + 4, 0)
    dest.write_bytes(bytes(data))


def huge_sample_entry(source: Path, dest: Path, width: int, height: int) -> None:
    """The track header and the ``avc1`` sample entry declare ``width`` x ``height``."""
    data = bytearray(source.read_bytes())
    for box in find(data, b"tkhd"):
        at = box.body + (88 if data[box.body] else 76)
        struct.pack_into(">II", data, at, width << 16, height << 16)
    for box in find(data, b"stsd"):
        entry = box.body + 8  # version/flags, entry count
        struct.pack_into(">HH", data, entry + 32, width, height)
    dest.write_bytes(bytes(data))
