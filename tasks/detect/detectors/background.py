"""The motion detector's background model: how it learns, follows the light and forgets ghosts.

Split from ``tasks.detect.detectors.motion`` (which finds regions of change against this model):
the selective update, the frame's overall gain (lights, auto-exposure), the remap to a new look
of the same place (an exposure reset, an infrared filter switching), the ghost test and the
places where text was read are the ways the background changes, and each is a pure function of
arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import ndimage

FloatImage = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]
Boxes = npt.NDArray[np.float64]

_REMAP_ROUNDS = 3  # fits of remap_background, each on the pixels the last one explained best


def edge_strength(planes: FloatImage) -> FloatImage:
    """``(H, W)`` gradient magnitude (Sobel), the largest over the channels."""
    gx = ndimage.sobel(planes, axis=2, mode="nearest")
    gy = ndimage.sobel(planes, axis=1, mode="nearest")
    return np.asarray(np.hypot(gx, gy).max(axis=0), dtype=np.float32)


def ghost_regions(
    mask: Mask, boxes: Boxes, planes: FloatImage, background: FloatImage, ratio: float
) -> npt.NDArray[np.bool_]:
    """Which regions of change are ghosts: the background's memory of a thing that has gone.

    A background restarted from one frame keeps whatever stood there then; once that thing
    moves away, the place it left differs from the background and reads as change, for
    minutes (the selective update). The outline tells them apart (the classic test, e.g.
    Cucchiara et al.'s Sakbot): around a real object the FRAME has a sharp edge (object against
    background) where the background model has none; around a ghost the BACKGROUND has the
    sharp edge (the stale outline) and the frame has none. A region is a ghost when the mean
    gradient of the frame along its outline is under ``ratio`` times the background's.
    """
    ghosts = np.zeros(len(boxes), dtype=bool)
    if not len(boxes) or ratio <= 0:
        return ghosts
    for k, (x1, y1, x2, y2) in enumerate(boxes.astype(np.int64)):
        inside = mask[y1:y2, x1:x2]
        band = ndimage.binary_dilation(inside) & ~ndimage.binary_erosion(inside)
        if band.sum() < 8:
            continue
        seen = float(edges_in(planes, (y1, y2, x1, x2))[band].mean())
        remembered = float(edges_in(background, (y1, y2, x1, x2))[band].mean())
        ghosts[k] = seen < ratio * remembered
    return ghosts


def forget_ghosts(
    boxes: Boxes, mask: Mask, planes: FloatImage, background: FloatImage, edge_ratio: float
) -> npt.NDArray[np.bool_]:
    """Which of ``boxes`` are ghosts (``ghost_regions``); their pixels leave ``mask`` and
    become background at once (both changed in place)."""
    ghosts = ghost_regions(mask, boxes, planes, background, edge_ratio)
    for x1, y1, x2, y2 in boxes[ghosts].astype(np.int64):
        gone = mask[y1:y2, x1:x2].copy()
        background[:, y1:y2, x1:x2][:, gone] = planes[:, y1:y2, x1:x2][:, gone]
        mask[y1:y2, x1:x2] &= ~gone
    return ghosts


def edges_in(planes: FloatImage, window: tuple[int, int, int, int]) -> FloatImage:
    """``edge_strength(planes)[y1:y2, x1:x2]`` for ``window = (y1, y2, x1, x2)``, exactly, from
    the window and the one-pixel ring around it (Sobel's reach) instead of the whole frame:
    the regions of change are a small part of the frame, and the whole-frame edges of both the
    frame and the background were half of the motion detector's time."""
    y1, y2, x1, x2 = window
    height, width = planes.shape[1:]
    top, left = max(y1 - 1, 0), max(x1 - 1, 0)
    edges = edge_strength(planes[:, top : min(y2 + 1, height), left : min(x2 + 1, width)])
    return edges[y1 - top : y2 - top, x1 - left : x2 - left]


def update_background(
    background: FloatImage, blurred: FloatImage, foreground: Mask, rates: tuple[float, float]
) -> None:
    """Move ``background`` towards ``blurred`` in place: ``rates`` = (background, foreground)."""
    rate = np.where(foreground, np.float32(rates[1]), np.float32(rates[0]))
    background += rate * (blurred - background)


def learn(
    background: FloatImage,
    planes: FloatImage,
    mask: Mask,
    rates: tuple[float, float],
    frames_since_reset: int,
) -> None:
    """Selective update (``update_background``) at ``rates`` (background, foreground); right
    after a restart background pixels take a running mean.

    The rate ``1 / (k + 2)`` on the k-th frame after a restart (until it falls to the learning
    rate) averages out the noise of the single frame the background began from within a few
    frames, instead of the ~``1 / learning_rate`` frames a fixed rate needs.
    """
    warm = 1.0 / (frames_since_reset + 2)
    update_background(background, planes, mask, (max(rates[0], warm), rates[1]))


def frame_gain(planes: FloatImage, reference: FloatImage) -> float:
    """How much brighter ``planes`` are than ``reference`` overall (the median ratio).

    Moving things cover a small part of the frame, so the median over every pixel is the
    light's change. Dark pixels say little about a gain and are left out; a gain under 1 %
    is noise and reads as none (so a still scene's background is not rescaled forever).
    """
    ref = reference[:, ::4, ::4]
    lit = ref > 20.0
    if lit.sum() < 16:
        return 1.0
    gain = float(np.median(planes[:, ::4, ::4][lit] / ref[lit]))
    return gain if 0.5 < gain < 2.0 and abs(gain - 1.0) > 0.01 else 1.0


def remap_background(background: FloatImage, planes: FloatImage) -> FloatImage:
    """``background`` as it would look in the light (or the camera mode) of ``planes``.

    A light switched on, an exposure reset or a camera's infrared filter switching changes how
    every pixel of the same place looks at once, which ``frame_gain`` (one factor) does not
    follow. Each channel of the frame is fitted as an affine mix of the background's channels
    (a colour frame turning grey is one such mix), by least squares on every fourth pixel, twice
    refitted on the pixels the fit explains best: moving things and clipped highlights are a
    small part of the frame, so they drop out of the fit, and things that were foreground stay
    foreground against the remapped background. Returns a new ``(C, H, W)`` array.
    """
    channels = background.shape[0]
    sample = background[:, ::4, ::4].reshape(channels, -1).T.astype(np.float64)
    target = planes[:, ::4, ::4].reshape(planes.shape[0], -1).T.astype(np.float64)
    design = np.hstack([sample, np.ones((len(sample), 1))])
    keep = np.ones(len(sample), dtype=bool)
    for _ in range(_REMAP_ROUNDS):
        coef = np.linalg.lstsq(design[keep], target[keep], rcond=None)[0]
        residual = np.abs(target - design @ coef).max(axis=1)
        keep = residual <= max(float(np.median(residual)) * 2.0, 2.0)
    flat = background.reshape(channels, -1).T @ coef[:channels] + coef[channels]
    remapped = np.clip(flat.T, 0.0, 255.0).reshape(planes.shape)
    return np.ascontiguousarray(remapped, dtype=np.float32)


def forget_text(
    mask: Mask,
    ignore: npt.NDArray[np.floating[Any]],
    background: FloatImage,
    planes: FloatImage,
    min_pixels: float,
) -> None:
    """Clear ``mask`` inside the normalised ``ignore`` boxes (widened by a pixel), where the
    background takes the frame at once: when the text goes, the ghost test sees it leave.

    Except for what passes in front of the text: a sign's change lies inside the sign, so a
    region of change reaching out of every ignored box by ``min_pixels`` or more (enough to
    be a region of its own) is a thing in front of it, a walker crossing a plate, and is kept
    whole rather than cut in two at the plate (or lost while the plate covers most of it).
    """
    height, width = mask.shape
    scaled = np.asarray(ignore, dtype=np.float64) * [width, height, width, height]
    text = np.zeros_like(mask)
    for x1, y1, x2, y2 in scaled:
        rows = slice(max(int(y1) - 1, 0), min(int(np.ceil(y2)) + 1, height))
        cols = slice(max(int(x1) - 1, 0), min(int(np.ceil(x2)) + 1, width))
        text[rows, cols] = True
    forget = text & ~_reaching_out(mask, text, min_pixels)
    mask &= ~forget
    background[:, forget] = planes[:, forget]


def _reaching_out(mask: Mask, area: Mask, min_pixels: float) -> Mask:
    """The pixels of ``mask``'s regions that have ``min_pixels`` or more outside ``area``."""
    labels, count = ndimage.label(mask)
    outside = np.bincount(labels[mask & ~area], minlength=count + 1)
    reaching = outside >= min_pixels
    reaching[0] = False
    return np.asarray(reaching[labels])
