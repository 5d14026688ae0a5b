"""What each detector costs per frame, and what OCR and YOLO cost the whole flow.

    .venv/bin/python benchmarks/detectors.py [--seconds 60] [--yolo-model PATH] [--skip-flow]

Part 1, per frame, on 720p and 1080p frames of the synthetic lobby (two signs, people walking),
each figure also as a ratio to decoding one frame of the same size in the same run (PyAV, the
floor every run pays):
  - motion: one sampled frame at the analysis size (240 px wide), colour background model;
  - ocr: one full-size frame (text detection limited to 640 px, recognition on full-size crops);
    1080p is also measured at 1280 px wide, the size the sample stage keeps (VES_OCR_WIDTH);
  - yolo: the plugin on one 480 px thumbnail (letterbox, onnxruntime, decoding, NMS), with the
    model given by --yolo-model, else a YOLOv8n-sized network with random weights (about 8
    GFLOPs, see benchmarks/_yolo_sized.py): the cost depends on the size, not on the weights.
Part 2, the process-video flow on the same 60 s 720p clip as benchmarks/pipeline.py, in fresh
processes, with `motion`, `motion+ocr` and `yolo+ocr`: x realtime and ratio to the plain decode of
the clip measured in this run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _yolo_sized import build_yolo_sized
from pipeline import CACHE, clip, measure_in_child, plain_decode

from synthetic import lobby_scene, render_frame, scale_scene, write_video
from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.motion import MotionDetector
from tasks.detect.detectors.ocr import OcrConfig, OcrDetector
from tasks.detect.detectors.yolo import YoloConfig, YoloDetector
from tasks.detections import Detections

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080)}


def median_ms(call: Callable[[], object], repeat: int) -> float:
    call()  # warm-up: sessions, arenas, caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def decode_ms_per_frame(size: tuple[int, int], tmp: Path) -> float:
    """Decoding one frame of this size (a 10 s clip of the lobby, all frames, none converted)."""
    spec = scale_scene(lobby_scene(), width=size[0], height=size[1], duration_s=10, fps=30)
    path = tmp / f"decode-{size[0]}.mp4"
    write_video(spec, path)
    seconds, frames = min(plain_decode(path) for _ in range(3))
    return seconds / frames * 1000


def resized(image: np.ndarray, width: int) -> np.ndarray:
    height = round(image.shape[0] * width / image.shape[1] / 2) * 2
    return np.asarray(Image.fromarray(image).resize((width, height), Image.Resampling.BOX))


def motion_ms(frames: list[np.ndarray]) -> float:
    detector = MotionDetector()
    small = [resized(f, 240) for f in frames]
    detector.detect_frame(0, 0.0, small[0], refreshed=True)
    started = time.perf_counter()
    for i, frame in enumerate(small[1:], start=1):
        detector.detect_frame(i, i * 0.2, frame)
    return (time.perf_counter() - started) / (len(small) - 1) * 1000


def ocr_ms(ocr: OcrDetector, frame: np.ndarray) -> float:
    return median_ms(lambda: ocr.read(frame), 5)


def yolo_ms(model: Path, frame: np.ndarray, tmp: Path) -> float:
    detector = YoloDetector(YoloConfig(model_path=model, threads=2))
    Image.fromarray(resized(frame, 480)).save(tmp / "0000000.jpg", quality=85)
    view = FrameView(0, 0.0, True, str(tmp), (240, 136), Detections.empty())
    return median_ms(lambda: detector.detect([view]), 10)


def per_frame(yolo_model: Path, tmp: Path) -> None:
    ocr = OcrDetector(OcrConfig(threads=2))
    print("detector cost per frame (median ms; x = times the decoding of one frame of that size)")
    for name, size in SIZES.items():
        spec = scale_scene(lobby_scene(), width=size[0], height=size[1])
        frames = [render_frame(spec, i) for i in range(40, 100, 2)]  # 4-10 s: both signs
        decode = decode_ms_per_frame(size, tmp)
        figures = {
            "decode (PyAV, no conversion)": decode,
            "motion (240 px, colour)": motion_ms(frames),
            f"ocr (full {size[0]} px)": ocr_ms(ocr, frames[10]),
        }
        if size[0] > 1280:
            figures["ocr (kept at 1280 px)"] = ocr_ms(ocr, resized(frames[10], 1280))
        figures["yolo (480 px thumbnail)"] = yolo_ms(yolo_model, frames[10], tmp)
        print(f"  {name}:")
        for label, ms in figures.items():
            print(f"    {label:32s} {ms:8.2f} ms  {ms / decode:7.1f} x")


def flow_runs(seconds: int, yolo_model: Path) -> None:
    path, tiny = clip(seconds, False), clip(2, False)
    decode_s, _ = plain_decode(path)
    print(f"\nthe flow on the {seconds} s 720p clip (plain decode of the clip: {decode_s:.2f} s)")
    modes = [
        {"detector": "motion"},
        {"detector": "motion+ocr"},
        {"detector": "yolo+ocr", "yolo_model": yolo_model.name},
    ]
    for options in modes:
        result = measure_in_child(path, tiny, options, models_dir=yolo_model.parent)
        cost = result["cost"]
        flow_s = result["flow_s"]
        detectors = ", ".join(
            f"{k} {v['frames']} frames {v['seconds']:.2f} s" for k, v in cost["detectors"].items()
        )
        print(
            f"  {cost['detector_mode']:11s} {flow_s:6.2f} s  {seconds / flow_s:5.1f} x realtime  "
            f"{flow_s / decode_s:5.2f} x decode   ({detectors})"
        )
        if cost["fallback"]["used"]:
            print(f"    fallback: {cost['fallback']['reason']}")
    print(f"(plain decode again: {plain_decode(path)[0]:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--yolo-model", type=Path, help="an Ultralytics-style ONNX export")
    parser.add_argument("--skip-flow", action="store_true", help="per-frame figures only")
    args = parser.parse_args()
    model = args.yolo_model or CACHE / "yolo-sized.onnx"
    if args.yolo_model is None and not model.exists():
        build_yolo_sized(model)
    with tempfile.TemporaryDirectory() as tmp:
        per_frame(model, Path(tmp))
    if not args.skip_flow:
        flow_runs(args.seconds, model.resolve())


if __name__ == "__main__":
    main()
