"""The dashboard: static pages that call the same API with the key the user signs in with."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"

router = APIRouter(tags=["dashboard"])

# The page must not be framed elsewhere nor load scripts from anywhere but here. Media may come
# from elsewhere: an HLS source is played from its own server (where the browser plays HLS).
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' blob: data:; media-src 'self' https: http:; "
        "style-src 'self'; script-src 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@router.get(
    "/dashboard",
    summary="Workspace dashboard",
    description=(
        "An HTML page: sign in with an API key; search every video, list, add and execute them; "
        "play a video and see its timeline, scene, evidence, cost and audit trail, ask it "
        "questions; see the billing state. `#video=<id>&t=<seconds>` opens a video's page "
        "playing from that time."
    ),
    response_class=FileResponse,
    responses={200: {"description": "The page.", "content": {"text/html": {}}}},
)
def dashboard() -> FileResponse:
    return FileResponse(STATIC_DIR / "dashboard.html", headers=_SECURITY_HEADERS)


def static_files() -> StaticFiles:
    """The dashboard's scripts and styles, mounted at ``/dashboard/static``."""
    return StaticFiles(directory=STATIC_DIR)
