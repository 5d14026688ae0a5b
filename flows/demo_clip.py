"""The demo workspace's clip: rendered once per data folder, then shared by every demo.

Rendering and encoding the synthetic scene costs seconds of CPU, so it happens on the first demo
only and later demos reuse the file. The clip appears atomically (encoded under a unique name,
then renamed), so a request never sees half a file. Threads of one process wait for the one that
renders; two processes starting their very first demo at the same moment may each render once,
and the last rename wins, which is harmless: each workspace takes its own copy of whichever
complete clip it found (``storage.artifacts.uploads.stage_copy``).
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

from synthetic import demo_scene, write_video

CLIP_NAME = "demo.mp4"

_render_lock = threading.Lock()


def ensure_demo_clip(directory: Path) -> Path:
    """The demo clip in ``directory``, rendered first if it is not there yet.

    The scene (``synthetic.demo_scene``) has three figures that move (one of them dwells),
    two signs with text and a scene cut, so every artifact of a run has content.
    """
    clip = directory / CLIP_NAME
    if clip.is_file():
        return clip
    with _render_lock:
        if not clip.is_file():  # another thread may have rendered it while we waited
            _render(clip)
    return clip


def _render(clip: Path) -> None:
    clip.parent.mkdir(parents=True, exist_ok=True)
    partial = clip.with_name(f".{uuid.uuid4().hex}{clip.suffix}")
    try:
        write_video(demo_scene(), partial)
        partial.replace(clip)
    finally:
        partial.unlink(missing_ok=True)
