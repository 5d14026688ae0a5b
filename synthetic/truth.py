"""A scene's ground truth, derived analytically from its spec (no video needed): where each
object is frame by frame, when each sign is shown, the cuts and lighting, and the people a
backdrop photo shows (``GroundTruth.dont_care``)."""

from __future__ import annotations

from synthetic.lighting import lighting_changes
from synthetic.photos import backdrop_people
from synthetic.scene import (
    Box,
    GroundTruth,
    MovingObject,
    ObjectTruth,
    PixelBox,
    SceneSpec,
    TextSign,
    TextTruth,
    cut_frames,
    object_box,
    sign_place,
    sign_shown,
)

_EPS = 1e-9


def _as_box(box: PixelBox) -> Box:
    """Convert an integer pixel box to the float box used in truth."""
    return float(box[0]), float(box[1]), float(box[2]), float(box[3])


def _dwell_intervals(obj: MovingObject, duration_s: float) -> tuple[tuple[float, float], ...]:
    """Merged stationary keyframe spans inside the video lasting >= 1 s."""
    spans: list[list[float]] = []
    for (t0, x0, y0), (t1, x1, y1) in zip(obj.keyframes, obj.keyframes[1:], strict=False):
        if t1 > t0 and (x0, y0) == (x1, y1):
            if spans and abs(spans[-1][1] - t0) < _EPS:
                spans[-1][1] = t1
            else:
                spans.append([t0, t1])
    clipped = ((max(a, 0.0), min(b, duration_s)) for a, b in spans)
    return tuple((a, b) for a, b in clipped if b - a >= 1.0 - _EPS)


def _object_truth(spec: SceneSpec, obj: MovingObject) -> ObjectTruth:
    """Truth for one object; it must be visible in at least one frame."""
    boxes: dict[int, Box] = {}
    for index in range(spec.frame_count):
        box = object_box(spec, obj, index)
        if box is not None:
            boxes[index] = _as_box(box)
    if not boxes:
        raise ValueError(f"object {obj.name!r} is never visible")
    first, last = min(boxes), max(boxes)
    dwell = _dwell_intervals(obj, spec.duration_s)
    return ObjectTruth(
        obj.name,
        obj.color,
        obj.size,
        first / spec.fps,
        last / spec.fps,
        boxes,
        dwell,
        obj.pattern,
        obj.identity or obj.name,
    )


def _text_truth(spec: SceneSpec, sign: TextSign) -> TextTruth:
    """Truth for one sign; it must be on screen in at least one frame."""
    frames = [i for i in range(spec.frame_count) if sign_shown(spec, sign, i)]
    box = sign_place(spec, sign)[2]
    if not frames or box is None:
        raise ValueError(f"sign {sign.text!r} is never visible")
    start, end = frames[0] / spec.fps, frames[-1] / spec.fps
    return TextTruth(sign.text, start, end, _as_box(box), sign.font_px, sign.style)


def _pictured_people(spec: SceneSpec) -> tuple[ObjectTruth, ...]:
    """The people of the backdrop photo, each in the frames of every segment that shows them."""
    if spec.backdrop_photo is None:
        return ()
    cuts, found = cut_frames(spec), []
    spans = zip((0, *cuts), (*cuts, spec.frame_count), strict=True)
    for segment, (start, end) in enumerate(spans):
        size = (spec.backdrop_photo, spec.width, spec.height, segment + spec.background)
        for k, box in enumerate(backdrop_people(*size, spec.seed)):
            boxes = dict.fromkeys(range(start, end), _as_box(box))
            name = f"pictured{segment}-{k}"
            w, h = box[2] - box[0], box[3] - box[1]
            found.append(
                ObjectTruth(
                    name, (0, 0, 0), (w, h), start / spec.fps, (end - 1) / spec.fps, boxes, ()
                )
            )
    return tuple(found)


def ground_truth(spec: SceneSpec) -> GroundTruth:
    """Derive a scene's truth analytically (times are frame-quantised)."""
    cuts = cut_frames(spec)
    return GroundTruth(
        spec=spec,
        frame_count=spec.frame_count,
        duration_s=spec.frame_count / spec.fps,
        objects=tuple(_object_truth(spec, o) for o in spec.objects),
        texts=tuple(_text_truth(spec, s) for s in spec.signs),
        scene_cuts=tuple(f / spec.fps for f in cuts),
        cut_frames=cuts,
        lighting=spec.lighting,
        lighting_changes=lighting_changes(spec.lighting),
        dont_care=_pictured_people(spec),
    )
