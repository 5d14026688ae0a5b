"""A planted workspace of KNOWN rows for the search and the workspace Ask (testkit.workspace)."""

from __future__ import annotations

from typing import Any

import pytest

from search.engine import SearchEngine
from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.workspace import PlantedRun, plant_run
from ves.settings import Settings


@pytest.fixture
def store(settings: Settings) -> BlobStore:
    return open_blob_store(settings)


@pytest.fixture
def world(catalog: Catalog, store: BlobStore) -> dict[str, Any]:
    """acme: "Front gate" (recorded 21:59:00, GATE 7 at 3-9 s, a person in the left zone at
    1-20 s who dwells 2-400 s), "Back door" (written before hits.parquet: "gate 77" at 5-6 s, a
    moving thing in the right zone), "Dock" (two runs: OLD SIGN, then NEW SIGN); globex: the
    front gate's twin."""
    tenants = TenantStore(catalog)
    acme, globex = (tenants.create_tenant(n).tenant_id for n in ("acme", "globex"))
    front = PlantedRun()
    gate = front.thing("text", 3.0, 9.0, text="GATE 7", confidence=0.95)
    person = front.thing("person", 1.0, 20.0, zones=("zone_left",), confidence=0.7)
    dwell = front.event("dwell", 2.0, 400.0, object_id=person)
    back = PlantedRun()
    gate77 = back.thing("text", 5.0, 6.0, text="gate 77", confidence=0.6)
    mover = back.thing("motion", 0.0, 4.0, zones=("zone_right",))
    old, new = PlantedRun(), PlantedRun()
    old.thing("text", 1.0, 2.0, text="OLD SIGN")
    new_sign = new.thing("text", 1.0, 2.0, text="NEW SIGN")
    ids = {
        "front": plant_run(
            catalog, store, acme, front, title="Front gate", recorded_at="2026-11-20T21:59:00Z"
        ),
        "back": plant_run(catalog, store, acme, back, title="Back door", with_hits=False),
        "theirs": plant_run(catalog, store, globex, front, title="Globex gate"),
    }
    dock = plant_run(catalog, store, acme, old, title="Dock")
    ids["dock_old"] = dock
    ids["dock"] = plant_run(catalog, store, acme, new, video_id=dock[0])
    return {
        "acme": acme,
        "globex": globex,
        "ids": ids,
        "rows": {"gate": gate, "person": person, "dwell": dwell, "gate77": gate77},
        "more": {"mover": mover, "new_sign": new_sign},
        "engine": SearchEngine(catalog, store),
    }
