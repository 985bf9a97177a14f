"""Generate the published JSON Schema of events and commands from the msgspec types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from schemas import SCHEMA_VERSION
from schemas.analysis import HandReview, ReviewRequest
from schemas.commands import Command, Rejection
from schemas.events import Event
from schemas.rating import RatedHandResult
from schemas.views import SeatView

HERE = Path(__file__).parent
PUBLISHED: dict[str, Any] = {
    "events.schema.json": Event,
    "commands.schema.json": Command,
    "rejection.schema.json": Rejection,
    "seat-view.schema.json": SeatView,
    "rating-results.schema.json": RatedHandResult,
    "analysis-requests.schema.json": ReviewRequest,
    "analysis-results.schema.json": HandReview,
}


def generate(union: Any) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a union of Structs, with its schema version."""
    schema: dict[str, Any] = msgspec.json.schema(union)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["x-schema-version"] = SCHEMA_VERSION
    return schema


def render(union: Any) -> str:
    """The schema as the stable text committed under ``schemas/``."""
    return json.dumps(generate(union), indent=2, sort_keys=True) + "\n"


def write() -> list[Path]:
    """Regenerate every published schema file; returns their paths."""
    paths = []
    for name, union in PUBLISHED.items():
        path = HERE / name
        path.write_text(render(union))
        paths.append(path)
    return paths


def stale() -> list[Path]:
    """Published files that differ from what the code generates."""
    return [
        HERE / name
        for name, union in PUBLISHED.items()
        if not (HERE / name).exists() or (HERE / name).read_text() != render(union)
    ]
