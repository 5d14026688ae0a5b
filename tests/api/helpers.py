"""What the API tests share: problem+json checks, upload specs, registering and awaiting videos."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import httpx

PROBLEM = "application/problem+json"


def expect_problem(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    """The RFC 9457 body of ``response``, asserted to carry ``status`` and ``code``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, object] = response.json()
    assert body["code"] == code and body["status"] == status
    assert body["request_id"] == response.headers["x-request-id"]
    return body


def upload_spec(data: bytes, **extra: object) -> dict[str, object]:
    """The ``upload`` object that registers ``data`` as an MP4 recording."""
    return {"filename": "rec.mp4", "size_bytes": len(data), "content_type": "video/mp4", **extra}


def wait_done(client: httpx.Client, video_id: str, timeout_s: float = 120) -> dict[str, Any]:
    """The video once its run ended (``succeeded`` or ``failed``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        video: dict[str, Any] = client.get(f"/api/product/videos/{video_id}").json()
        if video["state"] in {"succeeded", "failed"}:
            return video
        time.sleep(0.2)
    raise AssertionError(f"video {video_id} did not finish")


def add_video(client: httpx.Client, url: str) -> str:
    """Register the video at ``url`` (title "lobby"); its id."""
    response = client.post("/api/videos/add", json={"url": url, "title": "lobby"})
    assert response.status_code == 201, response.text
    return str(response.json()["video_id"])


def upload_recording(client: httpx.Client, data: bytes, title: str = "rec") -> str:
    """Register ``data`` as an uploaded MP4 recording and PUT its bytes; the video id."""
    spec = upload_spec(data, sha256=hashlib.sha256(data).hexdigest())
    body = {"title": title, "source_type": "upload", "upload": spec}
    video = client.post("/api/videos/add", json=body).json()
    put = client.put(video["upload_url"], content=data, headers={"content-type": "video/mp4"})
    assert put.status_code == 200, put.text
    return str(video["video_id"])
