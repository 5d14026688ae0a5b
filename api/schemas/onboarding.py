"""Request and response models of operation 10 (the demo workspace)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from api.schemas.videos import BLANK, PLAIN_LINE_PATTERN, no_control_chars

# Plausible, not RFC 5322: one '@', no spaces, a local part of at most 64 characters and a domain
# with a dot. Nothing is sent to the address, so a stricter check would only refuse real people.
# White space is spelled out (``BLANK``): ECMA 262's \s, which clients read, is not Python's.
EMAIL_PATTERN = rf"^[^@{BLANK}]{{1,64}}@[^@{BLANK}.]+(\.[^@{BLANK}.]+)+$"
_EMAIL = re.compile(EMAIL_PATTERN)


class DemoCreate(BaseModel):
    """Who the demo is for; both fields are optional and the body may be left out."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{}, {"name": "Ada", "email": "ada@example.com"}]},
    )

    name: str | None = Field(
        None,
        min_length=1,
        max_length=80,
        description="Goes into the workspace's name (`demo-<id> (<name>)`).",
        examples=["Ada"],
        json_schema_extra={"pattern": PLAIN_LINE_PATTERN},
    )
    email: str | None = Field(
        None,
        max_length=254,
        description="Checked for shape only; it is neither stored nor written to.",
        examples=["ada@example.com"],
        json_schema_extra={"pattern": _EMAIL.pattern},
    )

    @field_validator("name")
    @classmethod
    def _clean_name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = no_control_chars(value.strip(), "name")
        if not value:
            raise ValueError("name must not be blank")
        return value

    @field_validator("email")
    @classmethod
    def _plausible_email(cls, value: str | None) -> str | None:
        if value is not None and not _EMAIL.match(value):
            raise ValueError("email must look like name@example.com")
        return value


class DemoWorkspace(BaseModel):
    """The new workspace: its key (shown this once), its demo video and that video's run."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "tenant_id": "ten_01jd3k8m2qa7x4r5t6y7v8w9z0",
                    "tenant_name": "demo-3f9a1c2b7d4e",
                    "api_key": "ves_01jd3k8m2qa7x4r5t6y7v8w9z0_4pW8yF...",
                    "video_id": "vid_01jd3k8m2qa7x4r5t6y7v8w9z1",
                    "run_id": "run_01jd3k8m2qa7x4r5t6y7v8w9z2",
                    "state": "queued",
                    "dashboard_url": (
                        "http://127.0.0.1:8000/dashboard?video=vid_01jd3k8m2qa7x4r5t6y7v8w9z1"
                    ),
                }
            ]
        }
    )

    tenant_id: str
    tenant_name: str = Field(description="The workspace's name, for `ves keys list --tenant`.")
    api_key: str = Field(
        description="The workspace's key, shown this once: send it as `Authorization: Bearer`."
    )
    video_id: str
    run_id: str
    state: str = Field(description="The run's state when it was handed over (`queued`).")
    dashboard_url: str = Field(
        description=(
            "Opens the dashboard on the demo video. The key is not in it: the person pastes the "
            "key at the sign-in, so it never lands in browser history, logs or Referer headers."
        )
    )
