"""The rating store's schema, as numbered migrations applied at start (never edited once
released: a change is a new migration). Each store records what it applied in
``schema_migrations``.

Tables (PostgreSQL: in one schema, ``rating`` by default; SQLite: in ``ratings.sqlite3``):

- ``ratings``: the current rating of each (variant, player), rated hands done, the
  provisional flag and the offset of the last result that changed it;
- ``history``: one row per player per applied hand: rating before and after, the change,
  seat, points and the rated-hand count after it;
- ``hands``: every applied result by (variant, hand_id): a result seen again is a duplicate;
- ``positions``: per input topic, the next offset to read, with counters. It is written in
  the same transaction as the rows above: the store is the sink, so exactly once means
  storing the input position with the output.
"""

from __future__ import annotations

from services.runtime.sqlite import Migration

# (version, name, SQL); ``{schema}`` in PostgreSQL SQL is the store's schema, quoted.

POSTGRES: tuple[Migration, ...] = (
    (
        1,
        "ratings, history, applied hands, input positions",
        """
CREATE TABLE {schema}.ratings (
  variant text NOT NULL,
  player text NOT NULL,
  rating double precision NOT NULL,
  rated_hands integer NOT NULL,
  provisional boolean NOT NULL,
  last_seq bigint NOT NULL,
  PRIMARY KEY (variant, player)
);
CREATE INDEX ratings_leaderboard ON {schema}.ratings (variant, rating DESC, player)
  WHERE NOT provisional;
CREATE TABLE {schema}.history (
  variant text NOT NULL,
  player text NOT NULL,
  seq bigint NOT NULL,
  hand_id text NOT NULL,
  table_id text NOT NULL,
  seat smallint NOT NULL,
  points integer NOT NULL,
  rating_before double precision NOT NULL,
  rating_after double precision NOT NULL,
  delta double precision NOT NULL,
  rated_hands integer NOT NULL,
  PRIMARY KEY (variant, player, seq)
);
CREATE TABLE {schema}.hands (
  variant text NOT NULL,
  hand_id text NOT NULL,
  seq bigint NOT NULL,
  table_id text NOT NULL,
  PRIMARY KEY (variant, hand_id)
);
CREATE TABLE {schema}.positions (
  topic text PRIMARY KEY,
  next_offset bigint NOT NULL,
  applied bigint NOT NULL DEFAULT 0,
  ignored bigint NOT NULL DEFAULT 0
);
""",
    ),
    (
        2,
        "leaderboard with provisional players: established first, then provisional",
        """
CREATE INDEX ratings_board ON {schema}.ratings (variant, provisional, rating DESC, player);
""",
    ),
)

SQLITE: tuple[Migration, ...] = (
    (
        1,
        "ratings, history, applied hands, input positions",
        """
CREATE TABLE ratings (
  variant TEXT NOT NULL,
  player TEXT NOT NULL,
  rating REAL NOT NULL,
  rated_hands INTEGER NOT NULL,
  provisional INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  PRIMARY KEY (variant, player)
) WITHOUT ROWID;
CREATE INDEX ratings_leaderboard ON ratings (variant, provisional, rating DESC, player);
CREATE TABLE history (
  variant TEXT NOT NULL,
  player TEXT NOT NULL,
  seq INTEGER NOT NULL,
  hand_id TEXT NOT NULL,
  table_id TEXT NOT NULL,
  seat INTEGER NOT NULL,
  points INTEGER NOT NULL,
  rating_before REAL NOT NULL,
  rating_after REAL NOT NULL,
  delta REAL NOT NULL,
  rated_hands INTEGER NOT NULL,
  PRIMARY KEY (variant, player, seq)
) WITHOUT ROWID;
CREATE TABLE hands (
  variant TEXT NOT NULL,
  hand_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  table_id TEXT NOT NULL,
  PRIMARY KEY (variant, hand_id)
) WITHOUT ROWID;
CREATE TABLE positions (
  topic TEXT PRIMARY KEY,
  next_offset INTEGER NOT NULL,
  applied INTEGER NOT NULL DEFAULT 0,
  ignored INTEGER NOT NULL DEFAULT 0
);
""",
    ),
)
