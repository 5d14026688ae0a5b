"""``random_scene`` draws what it drew when the held-out figures were measured.

The held-out seeds' figures (``testkit.perception.SEED_RANGES``) compare runs before and after a
change, so a change to the generator's other families, or to the renderer, must leave these
scenes' pixels and truth as they were. The digests were computed on main before the cases family
(``synthetic.cases.scenes``) was added.
"""

from __future__ import annotations

import hashlib

import pytest

from synthetic import ground_truth, random_scene, render_frame

FROZEN = {
    0: "5723b75e4d2f0b3e",
    1: "12a5851381bd777d",
    2: "29d814d6bd2abd7a",
    7: "ed00b63984b68e72",
    100000: "2792e8514d3d02f7",
    100001: "a2394553e1fc2e43",
}


def scene_digest(seed: int) -> str:
    """A digest of five rendered frames (first, thirds, middle, last) and of the truth."""
    spec = random_scene(seed).spec
    digest = hashlib.sha256()
    n = spec.frame_count
    for index in sorted({0, n // 3, n // 2, 2 * n // 3, n - 1}):
        digest.update(render_frame(spec, index).tobytes())
    truth = ground_truth(spec)
    for o in truth.objects:
        digest.update(
            repr((o.name, o.first_seen_s, o.last_seen_s, sorted(o.boxes.items()))).encode()
        )
    for t in truth.texts:
        digest.update(repr((t.text, t.start_s, t.end_s, t.box)).encode())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("seed", sorted(FROZEN))
def test_random_scene_frames_and_truth_are_unchanged(seed: int) -> None:
    assert scene_digest(seed) == FROZEN[seed]
