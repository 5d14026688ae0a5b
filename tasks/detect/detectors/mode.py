"""A run's detector mode: which plugins run, and what that implies. The one owner of the string.

A mode is written ``<physical>[+<extra>...]``: one physical detector, whose boxes become the
scene's physical objects (``motion`` finds whatever moves and needs no model; ``yolo`` names
objects with a model the user gives), then the extras that add to it (``ocr`` reads the text in
the video). Settings, execute, the detect stage, ``cost.json`` and Ask all speak in these
strings; everywhere else asks this value (``reads_text``, ``needs_model``...) instead of
splitting the string again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PHYSICAL = ("yolo", "motion")  # whose boxes become the physical objects, in order of preference
EXTRAS = ("ocr",)
MODES = ("motion", "motion+ocr", "yolo", "yolo+ocr")
_SEES = {
    "motion": "things that move",
    "yolo": "the classes of its YOLO model and where they move",
    "ocr": "text shown in the video",
}


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
        if text not in MODES:
            raise ValueError(f"detector must be one of {', '.join(MODES)}")
        physical, *extras = text.split("+")
        return cls(physical, tuple(extras))

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
    def needs_model(self) -> bool:
        """The physical detector needs an ONNX model from the user (``yolo``)."""
        return self.physical == "yolo"

    @property
    def classes_by_motion(self) -> bool:
        """Physical objects are of class ``motion`` (no model names them)."""
        return self.physical == "motion"

    def sees(self) -> str:
        """What a run of this mode can see, in words (for refusals and captions)."""
        return " and ".join(_SEES[part] for part in self.parts)

    def __str__(self) -> str:
        return "+".join(self.parts)
