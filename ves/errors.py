"""The one error hierarchy of the service.

Every error a user can meet is a ``VesError``; the API renders each as RFC 9457 problem+json
from one handler, using the class's ``code``, ``status`` and ``title``::

    VesError                       500 internal
    ├── InvalidRequest             400 invalid_request      (e.g. JSON that does not parse)
    │   └── NotABundle             400 invalid_request      (a file that is no evidence bundle)
    ├── Unauthorized               401 unauthorized         (missing, unknown or revoked key)
    ├── PlanLimitExceeded          402 plan_limit_exceeded
    ├── Forbidden                  403 forbidden            (a signed media URL that is forged,
    │                                                         of another video, or expired)
    ├── NotFound                   404 not_found            (also another tenant's ids)
    │   └── BlobNotFound           404 not_found            (no such object in the blob store)
    ├── MethodNotAllowed           405 method_not_allowed
    ├── Conflict                   409 conflict             (e.g. executing a running video)
    │   ├── NotReady               409 not_ready            (artifacts before a run succeeded)
    │   └── NoStoredSource         409 no_stored_source     (a video whose bytes are not kept)
    ├── RequestTimeout             408 request_timeout      (headers or body too slow)
    ├── PayloadTooLarge            413 payload_too_large
    ├── UnsupportedMediaType       415 unsupported_media_type
    ├── RangeNotSatisfiable        416 range_not_satisfiable (carries the object's ``size``)
    ├── ValidationFailed           422 validation_error     (carries ``errors``)
    │   └── NotUnderstood          422 not_understood       (free text no reader can read;
    │                                                         carries ``interpreted``)
    ├── SourceError                422                      (a source URL or its bytes)
    │   ├── SourceUnreachable      422 source_unreachable
    │   └── SourceRejected         422 source_rejected      (SSRF guard, bad scheme)
    ├── RateLimited                429 rate_limited         (carries ``retry_after_s``)
    ├── Unavailable                503 unavailable          (the orchestrator cannot be reached)
    │   └── StorageUnavailable     503 unavailable          (the blob store fails or refuses)
    ├── SigningFailed              500 internal             (c2pa-python refused to sign a clip)
    └── ProcessingError            422                      (why a run failed; its ``code`` is
        │                                                     recorded as the run's error code)
        ├── SourceInvalid          422 source_invalid       (not a video, a still, corrupt)
        ├── SourceTruncated        422 source_truncated     (decoding stops before the end)
        ├── LimitExceeded          422 limit_exceeded       (longer, larger or bigger than allowed)
        └── DetectorUnavailable    422 detector_unavailable (a model cannot load or run; the run
                                                             falls back to motion and says so)

Third-party errors (PyAV, onnxruntime, HTTP clients, pyarrow's filesystems, c2pa-python) are
translated into these in one place each, with ``raise X(...) from exc``.
"""

from __future__ import annotations

from typing import Any, ClassVar


class VesError(Exception):
    """Base of every error of the service; unexpected ones render as 500 ``internal``."""

    code: ClassVar[str] = "internal"
    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"

    def __init__(self, detail: str, *, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors


class InvalidRequest(VesError):
    """The request could not be read at all (malformed JSON, bad cursor)."""

    code = "invalid_request"
    status = 400
    title = "Invalid request"


class NotABundle(InvalidRequest):
    """A file given as an evidence bundle is not one: not a zip, or a zip without a manifest
    (``ves verify`` exits 2); also a public key file that cannot be read."""


class Unauthorized(VesError):
    """No key, an unknown key, or a revoked key."""

    code = "unauthorized"
    status = 401
    title = "Unauthorized"


class PlanLimitExceeded(VesError):
    """The action would pass one of the tenant's plan limits (``limit`` names it, ``value`` is
    the plan's value, ``used`` what is used of it)."""

    code = "plan_limit_exceeded"
    status = 402
    title = "Plan limit exceeded"

    def __init__(self, detail: str, *, limit: str, value: float, used: float) -> None:
        super().__init__(detail)
        self.limit, self.value, self.used = limit, value, used


class Forbidden(VesError):
    """A credential that is not a key, for one resource (a signed media URL), does not grant it:
    forged, made for another video, or expired."""

    code = "forbidden"
    status = 403
    title = "Forbidden"


class NotFound(VesError):
    """No such record for this tenant (another tenant's record is reported the same way)."""

    code = "not_found"
    status = 404
    title = "Not found"


class BlobNotFound(NotFound):
    """The blob store holds no object under the key (translated in ``storage.artifacts.blobs``)."""


class MethodNotAllowed(VesError):
    """The route exists but not with this HTTP method."""

    code = "method_not_allowed"
    status = 405
    title = "Method not allowed"


class Conflict(VesError):
    """The record's state does not allow the action."""

    code = "conflict"
    status = 409
    title = "Conflict"


class NotReady(Conflict):
    """Artifacts were asked for before a run of the video succeeded."""

    code = "not_ready"
    title = "Not ready"


class NoStoredSource(Conflict):
    """The video's bytes are not kept by the service (a URL source is read again by every run,
    and no run has made its review copy yet; an upload whose bytes never arrived), so there is
    nothing to play."""

    code = "no_stored_source"
    title = "No stored source"


class RequestTimeout(VesError):
    """A request's headers or body did not arrive within the time allowed."""

    code = "request_timeout"
    status = 408
    title = "Request timeout"


class PayloadTooLarge(VesError):
    """A request body over the configured limit."""

    code = "payload_too_large"
    status = 413
    title = "Payload too large"


class UnsupportedMediaType(VesError):
    """A body of a content type the route does not take."""

    code = "unsupported_media_type"
    status = 415
    title = "Unsupported media type"


class RangeNotSatisfiable(VesError):
    """A ``Range`` header none of whose bytes lie within the object's ``size`` bytes."""

    code = "range_not_satisfiable"
    status = 416
    title = "Range not satisfiable"

    def __init__(self, detail: str, *, size: int) -> None:
        super().__init__(detail)
        self.size = size


class ValidationFailed(VesError):
    """Well-formed input that breaks a rule; ``errors`` lists each broken rule."""

    code = "validation_error"
    status = 422
    title = "Validation failed"


class NotUnderstood(ValidationFailed):
    """A free-text search the readers cannot turn into filters; ``interpreted`` holds what they
    did understand, so the client can rephrase rather than be answered with a guess."""

    code = "not_understood"
    title = "Query not understood"

    def __init__(self, detail: str, interpreted: dict[str, Any]) -> None:
        super().__init__(detail)
        self.interpreted = interpreted


class SourceError(VesError):
    """A problem with a video's source: its URL, its server or its bytes."""

    code = "source_rejected"
    status = 422
    title = "Source error"


class SourceUnreachable(SourceError):
    """The source's host does not resolve, does not answer, or answers with an error."""

    code = "source_unreachable"
    title = "Source unreachable"


class SourceRejected(SourceError):
    """The source is refused by policy: a scheme other than http(s), or a forbidden address."""

    code = "source_rejected"
    title = "Source rejected"


class RateLimited(VesError):
    """Too many requests from one client; retry after ``retry_after_s`` seconds."""

    code = "rate_limited"
    status = 429
    title = "Too many requests"

    def __init__(self, detail: str, *, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class Unavailable(VesError):
    """A service the request needs (the orchestrator) does not answer; retry later."""

    code = "unavailable"
    status = 503
    title = "Service unavailable"


class SigningFailed(VesError):
    """The Content Credentials (C2PA) of an exported clip could not be signed: ``c2pa-python``
    refused the manifest, the certificate or the file (``tasks/export/credentials.py``)."""


class ProcessingError(VesError):
    """A run could not process its video; recorded as the run's ``error``."""

    code = "processing_failed"
    status = 422
    title = "Processing failed"


class SourceInvalid(ProcessingError):
    """The source is not a usable video: no video stream, a still image, or corrupt data."""

    code = "source_invalid"
    title = "Not a usable video"


class SourceTruncated(ProcessingError):
    """Decoding stopped well before the duration the file declares."""

    code = "source_truncated"
    title = "Truncated video"


class LimitExceeded(ProcessingError):
    """The source is longer, larger or bigger than the service's bounds allow."""

    code = "limit_exceeded"
    title = "Limit exceeded"


class DetectorUnavailable(ProcessingError):
    """A detector's model is missing, unreadable or failed while running.

    Never fails a run: the detect stage catches it, goes on with ``motion`` and reports the
    reason in ``cost.json``'s ``fallback`` and in the evidence notes.
    """

    code = "detector_unavailable"
    title = "Detector unavailable"


class StorageUnavailable(Unavailable):
    """The blob store cannot be reached or refused the operation (credentials, bucket, network)."""
