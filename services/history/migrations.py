"""The hand-history store's schema, as numbered migrations applied at start (never edited
once released: a change is a new migration).

Tables (PostgreSQL: in one schema, ``history`` by default; SQLite: in ``history.sqlite3``):

- ``hands``: one row per seat of every finished hand (``services.history.fold.HandRow``),
  keyed by (hand_id, seat), with an index for a player's hands newest first;
- ``tables``: what ``lobby.events`` says about each table (public, Quick Play, computers);
- ``positions``: per input partition (``table.events`` 0-7, ``lobby.events`` 0), the next
  offset to read and where a restart reads from to rebuild the hands still open. Written in
  the same transaction as the rows above: exactly once.

Migration 2 adds the facts of a player's figures (``services.history.figures``) to
``hands``: ``won`` (self_drawn, discard or null), ``dealt_in`` (wins the player's discards
paid for), ``flower_pig`` and ``not_ready`` (at a wall exhaustion). Rows written before it
get null, 0, false, false: a win is still known from ``best_fan``, but not how it was won,
nor the deal-ins and the exhaustion facts. ``history rebuild`` reports those rows as
differing from the log; dropping the store and restarting the projection refolds them.
"""

from __future__ import annotations

from services.runtime.sqlite import Migration

# (version, name, SQL); ``{schema}`` in PostgreSQL SQL is the store's schema, quoted.

POSTGRES: tuple[Migration, ...] = (
    (
        1,
        "hands, tables, input positions",
        """
CREATE TABLE {schema}.hands (
  hand_id text NOT NULL,
  seat smallint NOT NULL,
  player text NOT NULL,
  table_id text NOT NULL,
  ended_ms bigint NOT NULL,
  kind text NOT NULL,
  rated boolean NOT NULL,
  public boolean NOT NULL,
  players text[] NOT NULL,
  score integer NOT NULL,
  placement smallint NOT NULL,
  best_fan integer,
  "end" text NOT NULL,
  "partition" integer NOT NULL,
  start_offset bigint NOT NULL,
  end_offset bigint NOT NULL,
  PRIMARY KEY (hand_id, seat)
);
CREATE INDEX hands_by_player ON {schema}.hands (player, ended_ms DESC, hand_id DESC);
CREATE TABLE {schema}.tables (
  table_id text PRIMARY KEY,
  public boolean NOT NULL,
  quick_play boolean NOT NULL,
  computers boolean NOT NULL,
  opened_ms bigint NOT NULL
);
CREATE TABLE {schema}.positions (
  topic text NOT NULL,
  "partition" integer NOT NULL,
  next_offset bigint NOT NULL,
  open_from bigint NOT NULL,
  PRIMARY KEY (topic, "partition")
);
""",
    ),
    (
        2,
        "the figures' facts: how a seat won, its deal-ins, flower pig, not ready",
        """
ALTER TABLE {schema}.hands ADD COLUMN won text;
ALTER TABLE {schema}.hands ADD COLUMN dealt_in integer NOT NULL DEFAULT 0;
ALTER TABLE {schema}.hands ADD COLUMN flower_pig boolean NOT NULL DEFAULT false;
ALTER TABLE {schema}.hands ADD COLUMN not_ready boolean NOT NULL DEFAULT false;
""",
    ),
)

SQLITE: tuple[Migration, ...] = (
    (
        1,
        "hands, tables, input positions",
        """
CREATE TABLE hands (
  hand_id TEXT NOT NULL,
  seat INTEGER NOT NULL,
  player TEXT NOT NULL,
  table_id TEXT NOT NULL,
  ended_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  rated INTEGER NOT NULL,
  public INTEGER NOT NULL,
  players TEXT NOT NULL,
  score INTEGER NOT NULL,
  placement INTEGER NOT NULL,
  best_fan INTEGER,
  "end" TEXT NOT NULL,
  "partition" INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  PRIMARY KEY (hand_id, seat)
) WITHOUT ROWID;
CREATE INDEX hands_by_player ON hands (player, ended_ms DESC, hand_id DESC);
CREATE TABLE tables (
  table_id TEXT PRIMARY KEY,
  public INTEGER NOT NULL,
  quick_play INTEGER NOT NULL,
  computers INTEGER NOT NULL,
  opened_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE positions (
  topic TEXT NOT NULL,
  "partition" INTEGER NOT NULL,
  next_offset INTEGER NOT NULL,
  open_from INTEGER NOT NULL,
  PRIMARY KEY (topic, "partition")
) WITHOUT ROWID;
""",
    ),
    (
        2,
        "the figures' facts: how a seat won, its deal-ins, flower pig, not ready",
        """
ALTER TABLE hands ADD COLUMN won TEXT;
ALTER TABLE hands ADD COLUMN dealt_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hands ADD COLUMN flower_pig INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hands ADD COLUMN not_ready INTEGER NOT NULL DEFAULT 0;
""",
    ),
)
