"""What a caller may choose for one execution, validated once and stored with the run."""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StrictBool,
    StrictFloat,
    field_validator,
)

from tasks.geometry import ZoneSpec, default_zones
from ves.detector_mode import MODES, SPELLINGS, DetectorMode
from ves.errors import PlanLimitExceeded, ValidationFailed
from ves.plans import PlanLimits
from ves.settings import Settings

MAX_COST = 1_000_000.0  # a cap above these is a typo, not a budget (422)
MAX_COMPUTE_S = 86_400.0
MIN_CAPPED_S = 1.0  # the least video a capped run processes (a smaller cap is refused, 422)


def service_detector_mode(settings: Settings) -> DetectorMode:
    """The service's default detector mode (``VES_DETECTOR``), checked at start-up.

    Raises:
        ValueError: naming the setting and the modes there are.
    """
    try:
        return DetectorMode.parse(settings.detector)
    except ValueError as exc:
        raise ValueError(f"VES_DETECTOR={settings.detector!r}: {exc}") from exc


class ZoneOption(BaseModel):
    """A named zone as a normalised polygon ``[[x, y], ...]`` (0..1)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=60, examples=["entrance"])
    polygon: list[tuple[StrictFloat, StrictFloat]] = Field(  # JSON numbers only
        min_length=3,
        max_length=64,
        examples=[[[0, 0], [0.4, 0], [0.4, 1], [0, 1]]],
        # ``_normalised``, said to clients: each point's x and y within 0..1.
        json_schema_extra={
            "items": {
                "type": "array",
                "prefixItems": [{"type": "number", "minimum": 0, "maximum": 1}] * 2,
                "minItems": 2,
                "maxItems": 2,
            }
        },
    )

    @field_validator("polygon")
    @classmethod
    def _normalised(cls, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        if any(not (0 <= x <= 1 and 0 <= y <= 1) for x, y in points):
            raise ValueError("polygon points must be normalised (0..1)")
        return points

    def to_spec(self) -> ZoneSpec:
        return ZoneSpec(self.name, tuple(self.polygon))


# A relative path inside the models folder: segments of anything but slashes, none of them "."
# or "..", no backslash; the schema states it and ``_inside_models_dir`` enforces the same.
_SEGMENT = r"(?:[^/\\.][^/\\]*|\.[^/\\.][^/\\]*|\.\.[^/\\]+)"
MODEL_PATH_PATTERN = rf"^{_SEGMENT}(?:/{_SEGMENT})*$"
_YOLO_SPELLINGS: list[JsonValue] = [s for s in SPELLINGS if s.startswith("yolo")]


class RunOptions(BaseModel):
    """Optional knobs of ``POST .../execute``; each defaults to the service's settings."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {},
                {"sample_fps": 2, "max_duration_s": 120},
                {"window_s": 30, "follow": True},
            ],
            # yolo_model goes with a yolo detector only (``resolved``), said to clients.
            "if": {"required": ["yolo_model"], "properties": {"yolo_model": {"type": "string"}}},
            "then": {
                "required": ["detector"],
                "properties": {"detector": {"enum": _YOLO_SPELLINGS}},
            },
        },
    )

    sample_fps: float | None = Field(
        None, strict=True, gt=0, le=30, description="Frames analysed per second."
    )
    detector: str | None = Field(
        None,
        description=(
            "Detector mode: `motion` finds whatever moves; `+person` names the moving things that "
            "are people; `+face` finds faces; `+ocr` reads the text in the video; `yolo` names "
            "objects with a YOLO ONNX model (motion still decides where it looks). One of "
            f"{', '.join(MODES)} (extras in any order); default: the service's "
            "`VES_DETECTOR` (`motion+person+ocr`)."
        ),
        examples=["motion+person+ocr"],
        json_schema_extra={"enum": [*SPELLINGS, None]},
    )
    yolo_model: str | None = Field(
        None,
        max_length=200,
        description=(
            "For `yolo` modes: an ONNX model file inside the service's models folder "
            "(`VES_MODELS_DIR`), as a relative path; default: the service's `VES_YOLO_MODEL`. "
            "Where the operator set none, a `yolo` mode needs it, and this deployment's OpenAPI "
            "says so (`allOf`)."
        ),
        examples=["yolov8n.onnx"],
        json_schema_extra={"pattern": MODEL_PATH_PATTERN},
    )
    max_duration_s: float | None = Field(
        None,
        strict=True,  # JSON numbers and booleans only: no "2" or "yes"
        gt=0,
        description="Process at most this many seconds from the start.",
    )
    skip_still: StrictBool | Literal["keyframes"] | None = Field(
        None,  # JSON booleans and the one word only: no "2" or "yes"
        description=(
            "Skip decoding the stretches judged still (the activity gate): they stay in the "
            "timeline as still, and `cost.json` says how many frames were skipped, where, and "
            "which cue judged them. `true`: judged from packet sizes and keyframes, where the "
            "stream's packet sizes follow activity (elsewhere everything is decoded); "
            '`"keyframes"`: judged from keyframes alone, for rate-capped streams (an event '
            "shorter than the longest GOP can be missed, and the run says so); `false`: decode "
            "everything. Default: the service's `VES_SKIP_STILL` (true unless set)."
        ),
        examples=[True, "keyframes"],
    )
    zones: list[ZoneOption] | None = Field(
        None, max_length=32, description="Named zones; default: left, center and right thirds."
    )
    # Estimates and caps (docs/how-to/estimates.md).
    dry_run: bool = Field(
        False,
        strict=True,  # JSON numbers and booleans only: no "2" or "yes"
        description="Answer 200 with the run's estimate (compute, wall time, price, the plan's "
        "remainder) and run nothing.",
    )
    max_cost: float | None = Field(
        None,
        strict=True,  # JSON numbers and booleans only: no "2" or "yes"
        gt=0,
        le=MAX_COST,
        allow_inf_nan=False,
        description="Hard cap on the price (unit of `VES_PRICE_PER_VIDEO_MINUTE`): at most "
        "`max_cost / price` minutes are processed and billed; the rest is skipped (`cost.json`: "
        "`truncated`, reason `max_cost`).",
        examples=[0.5],
    )
    max_compute_s: float | None = Field(
        None,
        strict=True,  # JSON numbers and booleans only: no "2" or "yes"
        gt=0,
        le=MAX_COMPUTE_S,
        allow_inf_nan=False,
        description="Hard cap on the compute seconds of the run's stages: sampling stops where "
        "the compute spent plus the estimate of what follows would pass it; what was processed "
        "is published (`cost.json`: `truncated`, reason `max_compute_s`).",
        examples=[30],
    )
    # Live HLS (issue 17).
    window_s: float | None = Field(
        None,
        strict=True,  # JSON numbers and booleans only: no "2" or "yes"
        ge=1,
        description=(
            "Live HLS only: seconds of the stream one window processes, from the live edge; "
            "default the plan's `live_window_s`, at most its `live_window_max_s`."
        ),
        examples=[30],
    )
    follow: bool | None = Field(
        None,
        strict=True,  # JSON numbers and booleans only: no "2" or "yes"
        description=(
            "Live HLS only: keep going in consecutive windows, each published as it closes, "
            "until `POST .../runs/{run_id}/stop`, the plan's processed seconds run out, the "
            "run's duration bound is reached, or the stream ends."
        ),
    )

    @field_validator("detector")
    @classmethod
    def _known_detector(cls, value: str | None) -> str | None:
        return None if value is None else str(DetectorMode.parse(value))

    @field_validator("yolo_model")
    @classmethod
    def _inside_models_dir(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not re.fullmatch(MODEL_PATH_PATTERN, value):
            raise ValueError("yolo_model must be a relative path inside the models folder")
        return value

    @field_validator("zones")
    @classmethod
    def _unique_names(cls, zones: list[ZoneOption] | None) -> list[ZoneOption] | None:
        names = [z.name for z in zones or []]
        if len(set(names)) != len(names):
            raise ValueError("zone names must be unique")
        return zones

    def resolved(self, settings: Settings, limits: PlanLimits | None = None) -> RunOptions:
        """These options with the service's detector mode and the plan's longest stretch filled
        in, checked against what the service has: a ``yolo`` mode needs a model, ``yolo_model``
        needs a ``yolo`` mode, ``max_duration_s`` must be within the plan.

        Raises:
            ValidationFailed: naming the field at fault.
            PlanLimitExceeded: ``max_duration_s`` is longer than the plan's ``max_video_s``.
        """
        mode = DetectorMode.parse(self.detector or settings.detector)
        uses_yolo = mode.needs_model
        if uses_yolo and not (self.yolo_model or settings.yolo_model):
            message = "the yolo detector needs a model: no VES_YOLO_MODEL is set, pass yolo_model"
            raise ValidationFailed(
                message, errors=[{"loc": ["body", "yolo_model"], "msg": message}]
            )
        if self.yolo_model and not uses_yolo:
            message = f"yolo_model is only used by the yolo detector modes, not {mode}"
            raise ValidationFailed(message, errors=[{"loc": ["body", "detector"], "msg": message}])
        # The plan's bounds last: a request its schema refuses is a 422 whatever the plan.
        bound = min(settings.max_duration_s, limits.max_video_s if limits else math.inf)
        if limits is not None and (self.max_duration_s or 0) > limits.max_video_s:
            raise PlanLimitExceeded(
                f"max_duration_s {self.max_duration_s:g} s is longer than the plan's limit "
                f"max_video_s = {limits.max_video_s:g} s",
                limit="max_video_s",
                value=limits.max_video_s,
                used=float(self.max_duration_s or 0),
            )
        live_window(self.window_s, limits or PlanLimits())  # checked here, chosen by the flow
        self._check_cost_cap(settings.price_per_video_minute)
        return self.model_copy(
            update={
                "detector": str(mode),
                "max_duration_s": min(self.max_duration_s or bound, bound),
            }
        )

    def cost_bound_s(self, price_per_video_minute: float) -> float | None:
        """Seconds of video ``max_cost`` buys at this price (None: no cap, or free processing)."""
        if self.max_cost is None or price_per_video_minute <= 0:
            return None
        return self.max_cost / price_per_video_minute * 60.0

    def _check_cost_cap(self, price_per_video_minute: float) -> None:
        """Refuse a ``max_cost`` that does not buy even ``MIN_CAPPED_S`` of video."""
        bound = self.cost_bound_s(price_per_video_minute)
        if bound is None or bound >= MIN_CAPPED_S:
            return
        least = MIN_CAPPED_S / 60.0 * price_per_video_minute
        message = (
            f"max_cost {self.max_cost:g} buys {bound:.3g} s of video at "
            f"{price_per_video_minute:g} a minute; a run processes at least {MIN_CAPPED_S:g} s "
            f"(max_cost >= {least:.4g})"
        )
        raise ValidationFailed(message, errors=[{"loc": ["body", "max_cost"], "msg": message}])

    def stored(self) -> dict[str, object]:
        """What the run keeps of these options (a dry run is never stored)."""
        return self.model_dump(mode="json", exclude_none=True, exclude={"dry_run"})

    def zone_specs(self) -> tuple[ZoneSpec, ...]:
        """The zones of the run (the defaults when none were given)."""
        return tuple(z.to_spec() for z in self.zones) if self.zones else default_zones()


def live_window(window_s: float | None, limits: PlanLimits) -> float:
    """The window of a live run: the one asked, else the plan's default (capped by its maximum).

    Raises:
        PlanLimitExceeded: ``window_s`` is longer than the plan's ``live_window_max_s``.
    """
    if window_s is not None and window_s > limits.live_window_max_s:
        raise PlanLimitExceeded(
            f"window_s {window_s:g} s is longer than the plan's limit "
            f"live_window_max_s = {limits.live_window_max_s:g} s",
            limit="live_window_max_s",
            value=limits.live_window_max_s,
            used=float(window_s),
        )
    return window_s or min(limits.live_window_s, limits.live_window_max_s)
