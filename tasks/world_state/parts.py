"""What the world state adds where the ``person`` and ``face`` detectors ran: how sure each
object's class is (the share of its looks that agreed, see ``tasks.track.classes``) and which
person each face belongs to (``part_of``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.detect.detectors.person import PERSON_CLASS, PersonConfig
from tasks.detections import detections_from_table, track_numbers
from tasks.geometry import inside_share
from tasks.track.classes import ClassVote, vote_classes
from tasks.world_state.trajectories import Track

FACE_CLASS = "face"
PART_OF_INSIDE = 0.5  # share of the face's box inside the person's box, on a shared frame


def class_votes(tracks: pa.Table, detections: pa.Table) -> dict[str, ClassVote]:
    """Object id -> the person detector's vote on it, for every motion object (empty when the
    person detector did not run)."""
    people = detections.filter(pc.equal(detections.column("detector"), PERSON_CLASS))
    moving = tracks.filter(pc.equal(tracks.column("detector"), "motion"))
    if not people.num_rows or not moving.num_rows:
        return {}
    votes = vote_classes(
        detections_from_table(moving),
        detections_from_table(people),
        PERSON_CLASS,
        PersonConfig().min_height,
    )
    return {object_id: votes[n] for object_id, n in track_numbers(moving).items() if n in votes}


def _shared_inside(face: Track, person: Track) -> list[float]:
    """Times of the frames both were seen on, with the face inside the person's box."""
    _, i_face, i_person = np.intersect1d(face.samples, person.samples, return_indices=True)
    return [
        float(face.t[i])
        for i, j in zip(i_face, i_person, strict=True)
        if inside_share(face.boxes[i : i + 1], person.boxes[j : j + 1])[0, 0] >= PART_OF_INSIDE
    ]


def part_of(
    faces: list[tuple[Track, str]], people: list[tuple[Track, str]]
) -> list[dict[str, Any]]:
    """``part_of`` relations: each face and the person whose box held it on the most shared
    frames (one person per face), from the first to the last of those frames."""
    relations = []
    for face, face_id in faces:
        best = max(
            ((_shared_inside(face, person), person_id) for person, person_id in people),
            key=lambda found: len(found[0]),
            default=([], ""),
        )
        times, person_id = best
        if not times:
            continue
        relations.append(
            {
                "subject_id": face_id,
                "predicate": "part_of",
                "object_id": person_id,
                "start_s": times[0],
                "end_s": times[-1],
            }
        )
    return relations


def class_attributes(vote: ClassVote | None, seen: float) -> dict[str, Any]:
    """What an object's attributes say of its class vote: the share of looks that agreed, how
    many looks voted, and the track's mean score."""
    if vote is None:
        return {}
    return {"class_share": round(vote.share, 3), "class_looks": vote.looks, "seen": round(seen, 3)}
