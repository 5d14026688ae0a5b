"""Ask Video's optional language-model backend, which may phrase answers from the evidence."""

from __future__ import annotations

from pydantic import Field, SecretStr

from ves.settings.base import SettingsGroup


class AskSettings(SettingsGroup):
    """The OpenAI-compatible endpoint Ask Video may use; unset, answers are rule-based only."""

    ask_llm_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8080/v1) that may phrase "
            "answers from the retrieved evidence; off when unset. Its answers pass the same "
            "guardrail, else the rule-based answer is returned."
        ),
    )
    ask_llm_model: str = Field("gpt-4o-mini", description="Model name sent to that endpoint.")
    ask_llm_api_key: SecretStr | None = Field(None, description="Bearer key for that endpoint.")
    ask_llm_timeout_s: float = Field(
        10.0, gt=0, le=120, description="Longest wait for that endpoint before answering alone."
    )
