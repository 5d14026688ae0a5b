"""Standard Webhooks signatures: the spec's published example, and what a receiver checks."""

from __future__ import annotations

import base64
import json

import pytest

from ves.webhook_signature import headers, new_secret, secret_bytes, sign, verify

# The example of the Standard Webhooks specification and its reference libraries' tests.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_the_spec_example_signs_as_published() -> None:
    assert sign(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY) == SPEC_SIGNATURE


def test_a_new_secret_is_32_random_bytes_after_its_prefix() -> None:
    first, second = new_secret(), new_secret()
    assert first.startswith("whsec_") and first != second
    assert len(secret_bytes(first)) == 32


def test_verify_accepts_the_body_signed_and_nothing_else() -> None:
    secret = new_secret()
    body = json.dumps({"type": "run.succeeded"}).encode()
    sent = headers(secret, "msg_1", 1700000000, body)
    signature = sent["webhook-signature"]
    assert verify(secret, "msg_1", 1700000000, body, signature)
    assert verify(secret, "msg_1", 1700000000, body, f"v1,bm90IGl0 {signature}")  # rotation list
    assert not verify(secret, "msg_1", 1700000000, body + b" ", signature)
    assert not verify(secret, "msg_2", 1700000000, body, signature)
    assert not verify(secret, "msg_1", 1700000001, body, signature)
    assert not verify(new_secret(), "msg_1", 1700000000, body, signature)


def test_the_reference_library_verifies_our_headers() -> None:
    """The ``standardwebhooks`` package (a test-only dependency, when installed) agrees."""
    standardwebhooks = pytest.importorskip("standardwebhooks")
    secret = new_secret()
    body = b'{"type":"export.ready"}'
    import time

    sent = headers(secret, "msg_x", int(time.time()), body)
    assert standardwebhooks.Webhook(secret).verify(body, sent) == {"type": "export.ready"}
    assert base64.b64decode(sent["webhook-signature"][3:])  # base64 after "v1,"
