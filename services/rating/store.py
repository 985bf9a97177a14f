"""Which rating store: PostgreSQL (``services.rating.postgres``) when a DSN is given, else
SQLite in the data folder (``services.rating.embedded``). The port they implement, and the
records they pass, are in ``services.rating.port`` (re-exported here).
"""

from __future__ import annotations

import os
from pathlib import Path

from services.rating.port import COMPARED as COMPARED
from services.rating.port import DEAD_LETTER as DEAD_LETTER
from services.rating.port import DEFAULT_VARIANT as DEFAULT_VARIANT
from services.rating.port import Applied as Applied
from services.rating.port import Batch as Batch
from services.rating.port import FoldedLog as FoldedLog
from services.rating.port import HistoryEntry as HistoryEntry
from services.rating.port import LogFold as LogFold
from services.rating.port import Place as Place
from services.rating.port import PlayerRating as PlayerRating
from services.rating.port import Position as Position
from services.rating.port import RatingStore as RatingStore
from services.rating.port import RecomputeReport as RecomputeReport
from services.rating.port import TableSpec as TableSpec
from services.rating.port import show_value as show_value

DSN_ENV = ("MAHJONG_POSTGRES_DSN", "MAHJONG_PG_DSN")
"""Environment variables naming the PostgreSQL database, the first set wins."""


def postgres_dsn(explicit: str | None) -> str | None:
    """The PostgreSQL DSN: ``--postgres``, else the environment, else None (embedded)."""
    if explicit:
        return explicit
    for name in DSN_ENV:
        if os.environ.get(name):
            return os.environ[name]
    return None


def open_store(dsn: str | None, data_dir: str | Path, schema: str = "rating") -> RatingStore:
    """PostgreSQL (tables in ``schema``) when a DSN is given, else the embedded store in
    ``data_dir``."""
    if dsn:
        from services.rating.postgres import PostgresRatingStore

        return PostgresRatingStore(dsn, schema)
    from services.rating.embedded import EmbeddedRatingStore

    return EmbeddedRatingStore(data_dir)
