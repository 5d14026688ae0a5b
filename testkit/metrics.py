"""Reading a Prometheus text scrape in tests: every sample, and a sum over matching labels."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(text: str) -> Samples:
    """Each sample of a scrape, keyed by its name and sorted labels."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scraped: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(
        v for (n, ls), v in scraped.items() if n == name and labels.items() <= dict(ls).items()
    )


def scrape_until(url: str, done: Callable[[Samples], bool], timeout_s: float = 30) -> Samples:
    """``url``'s metrics once ``done`` holds of them: a run's cost record (its stages and frames)
    is written just after the run is marked succeeded, so a client that saw "succeeded" may
    scrape a moment before it lands. Returns the last scrape when ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        scraped = samples(httpx.get(f"{url}/metrics", timeout=30).text)
        if done(scraped) or time.monotonic() > deadline:
            return scraped
        time.sleep(0.2)
