"""A run's detector mode: which plugins run, and what that implies. The one owner of the string.

A mode is written ``<physical>[+<extra>...]``: one physical detector, whose boxes become the
scene's physical objects (``motion`` finds whatever moves and needs no model; ``yolo`` names
objects with a model the user gives), then the extras that add to it: ``person`` finds the people
(a learned pedestrian network, tracked by detection; with ``motion`` only: a YOLO model's classes
win), ``face`` finds faces (CenterFace), ``ocr`` reads the text in the video. Extras may be
written in any order and are kept in ``EXTRAS`` order. Settings, execute, the detect stage,
``cost.json`` and Ask all speak in these strings; everywhere else asks this value
(``reads_text``, ``needs_model``, ``classes``...) instead of splitting the string again.

It lives in the shared kernel, not beside the detectors, because the run context, execute's
options and Ask read it too: none of them needs to reach up into a stage's folder for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations, permutations

PHYSICAL = ("yolo", "motion")  # whose boxes become the physical objects, in order of preference
EXTRAS = ("person", "face", "ocr")  # the order they run and are written in
_EXTRAS_OF = {
    "motion": EXTRAS,
    "yolo": ("face", "ocr"),
}  # a YOLO model's classes win over the person network's
MODES = tuple(
    "+".join((physical, *extras))
    for physical in ("motion", "yolo")
    for n in range(len(_EXTRAS_OF[physical]) + 1)
    for extras in combinations(_EXTRAS_OF[physical], n)
)
# Every way a mode may be written (its extras in any order), for the API's schema.
SPELLINGS = tuple(
    "+".join((physical, *extras))
    for physical in ("motion", "yolo")
    for n in range(len(_EXTRAS_OF[physical]) + 1)
    for extras in permutations(_EXTRAS_OF[physical], n)
)
_SEES = {
    "motion": "things that move",
    "yolo": "the classes of its YOLO model and where they move",
    "person": "people",
    "face": "faces",
    "ocr": "text shown in the video",
}


def parts_of(text: str) -> tuple[str, ...]:
    """The plugin names of a mode as written (``motion+person+ocr``), unchecked: a mode stored
    by an older run may name plugins no longer offered. The one place a mode string is split
    (``tests/test_layers.py`` fails on a second)."""
    return tuple(text.split("+"))


@dataclass(frozen=True)
class DetectorMode:
    """One of ``MODES``, split once: ``physical`` and its ``extras`` in the order they run."""

    physical: str
    extras: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> DetectorMode:
        """The mode written ``text``.

        Raises:
            ValueError: naming the modes there are.
        """
        physical, *extras = parts_of(text)
        allowed = _EXTRAS_OF.get(physical, ())
        repeated = len(set(extras)) != len(extras)
        if physical not in PHYSICAL or repeated or set(extras) - set(allowed):
            raise ValueError(f"detector must be one of {', '.join(MODES)} (extras in any order)")
        return cls(physical, tuple(name for name in EXTRAS if name in extras))

    @classmethod
    def of_plugins(cls, names: Iterable[str]) -> DetectorMode:
        """The mode of the plugins that ran (the preferred physical one among them)."""
        ran = list(names)
        physical = next(name for name in PHYSICAL if name in ran)
        return cls(physical, tuple(name for name in ran if name not in PHYSICAL))

    @property
    def parts(self) -> tuple[str, ...]:
        """Every plugin of the mode, the physical one first (it runs first and gates the rest)."""
        return (self.physical, *self.extras)

    @property
    def reads_text(self) -> bool:
        """The run reads text (the sample stage keeps full-size frames for it)."""
        return "ocr" in self.extras

    @property
    def names_people(self) -> bool:
        """A person detector ran over the moving things (``person``)."""
        return "person" in self.extras

    @property
    def finds_faces(self) -> bool:
        """Faces are looked for (``face``)."""
        return "face" in self.extras

    @property
    def needs_model(self) -> bool:
        """The physical detector needs an ONNX model from the user (``yolo``)."""
        return self.physical == "yolo"

    @property
    def classes_by_motion(self) -> bool:
        """Physical objects are of class ``motion`` (no model names them, not even people)."""
        return self.physical == "motion" and not self.names_people

    def classes(self) -> tuple[str, ...]:
        """The object classes a run of this mode can name (besides YOLO's own, and ``motion``
        for moving things nothing named)."""
        named = {"person": ("person",), "face": ("face",), "ocr": ("text",)}
        return tuple(c for part in self.extras for c in named[part])

    def sees(self) -> str:
        """What a run of this mode can see, in words (for refusals and captions)."""
        seen = [_SEES[part] for part in self.parts]
        return seen[0] if len(seen) == 1 else ", ".join(seen[:-1]) + " and " + seen[-1]

    def __str__(self) -> str:
        return "+".join(self.parts)
