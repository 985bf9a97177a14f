"""Which hand-history store: PostgreSQL (``services.history.postgres``) when a DSN is given,
else ``history.sqlite3`` in the data folder (``services.history.embedded``). The port they
implement, and the records they pass, are in ``services.history.port`` (re-exported here).
"""

from __future__ import annotations

from pathlib import Path

from services.history.port import Applied as Applied
from services.history.port import HistoryStore as HistoryStore
from services.history.port import Position as Position
from services.history.port import PositionKey as PositionKey
from services.history.port import Snapshot as Snapshot
from services.history.port import Step as Step
from services.history.port import rows_for as rows_for


def open_store(dsn: str | None, data_dir: str | Path, schema: str = "history") -> HistoryStore:
    """PostgreSQL (tables in ``schema``) when a DSN is given, else ``history.sqlite3`` in
    ``data_dir``."""
    if dsn:
        from services.history.postgres import PostgresHistoryStore

        return PostgresHistoryStore(dsn, schema)
    from services.history.embedded import EmbeddedHistoryStore

    return EmbeddedHistoryStore(data_dir)
