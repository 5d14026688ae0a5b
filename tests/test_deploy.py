"""The operators' Grafana dashboard and alert rules (``deploy/grafana/``): valid JSON and YAML,
and every expression names only metrics the service exports (those in docs/reference/metrics.md,
which tests/api/test_metrics.py holds to what a scrape answers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "grafana"
DOC = ROOT / "docs" / "reference" / "metrics.md"
_NAME = re.compile(r"\bves_[a-z_]+")
_SUFFIXES = ("_total", "_bucket", "_count", "_sum")


def documented() -> set[str]:
    return set(re.findall(r"^\| `(ves_\w+)` \|", DOC.read_text(), flags=re.MULTILINE))


def family(name: str) -> str:
    """The metric family a series name belongs to (``ves_frames_total`` -> ``ves_frames``)."""
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and name.removesuffix(suffix) in documented():
            return name.removesuffix(suffix)
    return name


def named(expressions: list[str]) -> set[str]:
    return {family(n) for e in expressions for n in _NAME.findall(e)}


def test_the_dashboard_is_grafana_json_over_exported_metrics() -> None:
    dashboard = json.loads((DEPLOY / "ves-dashboard.json").read_text())
    assert dashboard["uid"] and dashboard["panels"]
    expressions = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert all(_NAME.search(e) for e in expressions), "a panel with no metric of ours"
    used = named(expressions)
    assert used <= documented(), f"not exported: {used - documented()}"
    assert documented() - used == set(), "a metric without a panel"
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_the_alert_rules_name_only_exported_metrics() -> None:
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"][0]["rules"]
    alerts = {r["alert"] for r in rules}
    wanted = {"VesQueueWaitLong", "VesRunFailures", "VesStorageNearPlan", "VesRetentionSweepStale"}
    assert wanted <= alerts
    used = named([r["expr"] for r in rules])
    assert used and used <= documented(), f"not exported: {used - documented()}"
    assert all(r["annotations"]["summary"] for r in rules)
