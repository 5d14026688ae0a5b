"""Which cue a run's activity gate judges stillness by: on by default (packets), keyframes when
asked for (per run or for the deployment), off when asked; a run's option wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.context import RunContext, SourceRef
from tasks.options import RunOptions
from ves.settings import Settings


def _ctx(tmp_path: Path, setting: object = None, option: object = None) -> RunContext:
    settings = (
        Settings(data_dir=tmp_path)
        if setting is None
        else Settings(data_dir=tmp_path, skip_still=setting)
    )
    options = RunOptions() if option is None else RunOptions(skip_still=option)
    return RunContext(settings, "run_c", "ten_c", "vid_c", SourceRef("upload", None, "x"), options)


@pytest.mark.parametrize(
    ("setting", "option", "cue"),
    [
        (None, None, "packets"),  # the default: on, where the packets follow activity
        (False, None, None),
        ("keyframes", None, "keyframes"),
        (False, True, "packets"),  # the run's option wins over the deployment's
        (True, False, None),
        (True, "keyframes", "keyframes"),
        ("keyframes", True, "packets"),
    ],
)
def test_the_run_option_wins_and_the_gate_is_on_by_default(
    tmp_path: Path, setting: object, option: object, cue: str | None
) -> None:
    ctx = _ctx(tmp_path, setting, option)
    assert ctx.still_cue == cue
    assert ctx.skip_still is (cue is not None)


def test_the_deployment_chooses_keyframes_by_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for value, cue in (("keyframes", "keyframes"), ("false", None), ("true", "packets")):
        monkeypatch.setenv("VES_SKIP_STILL", value)
        assert _ctx(tmp_path).still_cue == cue, value
