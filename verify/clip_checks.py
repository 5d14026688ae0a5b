"""The ``clips`` check of ``ves verify``: each clip decodes; version 2: each span's clip shows the
span's whole extent and a frame at each of its thumbnails' source times; version 1 (a clip per
span): each clip holds a frame at each thumbnail time it lists."""

from __future__ import annotations

import zipfile
from typing import Any

from verify.clips import ClipUnreadable, clip_frame_times, times_not_held
from verify.verdict import READ_ERRORS, Check


def check_clips(archive: zipfile.ZipFile, names: list[str], manifest: dict[str, Any]) -> Check:
    if manifest["format_version"] == 1:
        return _check_clips_v1(archive, manifest)
    check, held = Check("clips"), 0
    clips = {clip["path"]: clip for clip in manifest["clips"]}
    for span in manifest["spans"]:
        if span["clip"] not in clips:
            check.fail(span["path"], f"names clip {span['clip']}, which the manifest does not list")
    for path, clip in clips.items():
        read = _clip_times(archive, path, check)
        shown = [s for s in manifest["spans"] if s["clip"] == path]
        if read is not None:
            held += sum(_check_span_in_clip(check, path, clip, span, *read) for span in shown)
    check.summary = (
        f"{len(clips)} clips decode, each span within its clip, a frame at each of {held} times"
    )
    return check


def _check_span_in_clip(
    check: Check,
    path: str,
    clip: dict[str, Any],
    span: dict[str, Any],
    times: list[float],
    interval: float,
) -> int:
    """Fail ``path`` unless it shows the span's whole extent and a frame at each of its
    thumbnail times; return how many times were checked."""
    start, wanted = float(clip["source_start_s"]), [float(t) for t in span["thumbnail_times_s"]]
    first, last = float(span["clip_start_s"]), float(span["clip_end_s"])
    if times[0] > first + interval or times[-1] < last - interval:
        check.fail(
            path,
            f"does not show span {span['evidence_id']} whole (clip time {first:.3f}..{last:.3f} s;"
            f" frames cover {times[0]:.3f}..{times[-1]:.3f} s)",
        )
    _fail_absent(check, path, start, times, times_not_held(times, interval, start, wanted))
    return len(wanted)


def _check_clips_v1(archive: zipfile.ZipFile, manifest: dict[str, Any]) -> Check:
    """Version 1: a clip per span, the thumbnail times it holds on the clip's entry."""
    check, held = Check("clips"), 0
    for clip in manifest["clips"]:
        path, wanted = clip["path"], [float(t) for t in clip["thumbnail_times_s"]]
        read = _clip_times(archive, path, check)
        if read is None:
            continue
        times, interval = read
        start = float(clip["source_start_s"])
        _fail_absent(check, path, start, times, times_not_held(times, interval, start, wanted))
        held += len(wanted)
    check.summary = f"{len(manifest['clips'])} clips decode, a frame at each of {held} times"
    return check


def _clip_times(
    archive: zipfile.ZipFile, path: str, check: Check
) -> tuple[list[float], float] | None:
    """The clip's frame times and interval, or None after failing ``check`` on ``path``."""
    try:
        with archive.open(path) as member:
            return clip_frame_times(member)
    except KeyError:
        check.fail(path, "missing from the zip")
    except (ClipUnreadable, *READ_ERRORS) as exc:
        check.fail(path, str(exc))
    return None


def _fail_absent(
    check: Check, path: str, start: float, times: list[float], absent: list[float]
) -> None:
    if absent:
        check.fail(
            path,
            f"holds no frame at source time(s) {absent} s "
            f"(frames cover {start + times[0]:.3f}..{start + times[-1]:.3f} s)",
        )
