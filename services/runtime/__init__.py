"""Ports and adapters: the event log (Kafka or embedded SQLite) and the stores."""
