"""Typed events and commands of a Blood Battle hand (msgspec tagged unions).

The published JSON Schema files beside this module are generated from these types
(``mahjong-planet schemas --write``). Evolve them only by adding fields with defaults.
"""

SCHEMA_VERSION = 1
