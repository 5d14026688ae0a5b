"""Ready-made scenes used by tests, benchmarks and the demo workspace."""

from __future__ import annotations

from dataclasses import replace

from synthetic.scene import MovingObject, SceneSpec, TextSign


def lobby_scene(*, noise: float = 2.0, seed: int = 0, bitrate: int | None = None) -> SceneSpec:
    """A 20 s 320x240 @ 10 fps lobby with known events; nothing ever overlaps.

    "walker" (red) crosses left to right during 0.5-8.5 s; "loiterer" (green)
    walks in, dwells at (180, 118) during 3.5-9.5 s and leaves by 11.9 s; the
    background changes at the 12 s cut; "visitor" (blue) enters from the
    bottom at ~13 s. "LOBBY" is shown throughout, "EXIT 3" during 4-9 s.
    """
    walker = ((0.5, -15, 196), (8.5, 335, 196))
    loiterer = ((1.0, 340, 118), (3.5, 180, 118), (9.5, 180, 118), (11.9, -20, 118))
    visitor = ((13.0, 60, 256), (15.0, 60, 160), (19.5, 345, 160))
    objects = (
        MovingObject("walker", (210, 40, 40), (20, 44), walker),
        MovingObject("loiterer", (40, 180, 70), (24, 48), loiterer),
        MovingObject("visitor", (50, 80, 210), (30, 30), visitor),
    )
    signs = (
        TextSign("LOBBY", 0.0, 20.0, (160, 26), font_px=28),
        TextSign("EXIT 3", 4.0, 9.0, (262, 70), font_px=20),
    )
    scene = SceneSpec(duration_s=20.0, objects=objects, signs=signs, scene_cuts=(12.0,))
    return replace(scene, noise=noise, seed=seed, bitrate=bitrate)


def _scale_object(obj: MovingObject, sx: float, sy: float, st: float) -> MovingObject:
    """Stretch an object's size, path and timing."""
    keys = tuple((t * st, x * sx, y * sy) for t, x, y in obj.keyframes)
    return replace(obj, size=(round(obj.size[0] * sx), round(obj.size[1] * sy)), keyframes=keys)


def _scale_sign(sign: TextSign, sx: float, sy: float, st: float) -> TextSign:
    """Move a sign with the frame and stretch its timing; its font scales uniformly."""
    center = (round(sign.center[0] * sx), round(sign.center[1] * sy))
    font_px = max(1, round(sign.font_px * min(sx, sy)))
    return replace(
        sign, start_s=sign.start_s * st, end_s=sign.end_s * st, center=center, font_px=font_px
    )


def scale_scene(
    spec: SceneSpec,
    *,
    width: int,
    height: int,
    duration_s: float | None = None,
    fps: int | None = None,
) -> SceneSpec:
    """Stretch a scene to another frame size and length, keeping its story.

    Positions and object sizes scale per axis, fonts by the smaller factor,
    and every time (keyframes, signs, cuts) by ``duration_s / spec.duration_s``.
    E.g. the benchmark's 720p minute: ``scale_scene(demo_scene(), width=1280,
    height=720, duration_s=60, fps=30)``.
    """
    sx, sy = width / spec.width, height / spec.height
    st = (duration_s or spec.duration_s) / spec.duration_s
    return replace(
        spec,
        width=width,
        height=height,
        fps=fps or spec.fps,
        duration_s=spec.duration_s * st,
        objects=tuple(_scale_object(o, sx, sy, st) for o in spec.objects),
        signs=tuple(_scale_sign(s, sx, sy, st) for s in spec.signs),
        scene_cuts=tuple(c * st for c in spec.scene_cuts),
    )


def demo_scene() -> SceneSpec:
    """The lobby stretched to 640x360 @ 15 fps over 30 s (cut at 18 s, 9 s dwell)."""
    return scale_scene(lobby_scene(), width=640, height=360, duration_s=30.0, fps=15)
