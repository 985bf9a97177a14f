"""The gateway: HTTP (REST + OpenAPI) and WebSocket in front of the event log, and the web
client it serves. See docs/gateway.md.

| module | idea |
|---|---|
| ``config.py`` | ``GatewayConfig``: address, data folder, limits, secrets from the environment |
| ``protocol.py`` | the WebSocket frames (msgspec Structs, versioned), their JSON Schema |
| ``visibility.py`` | a hand's events as one seat may see them (RULES.md §10) |
| ``accounts.py`` | accounts, argon2 passwords, session tokens, guests; the store port |
| ``store_sqlite.py`` / ``store_postgres.py`` | the account store in SQLite or PostgreSQL |
| ``tables.py`` | follows ``table.events`` / ``table.replies``, folds each watched hand |
| ``lobby.py`` | follows ``lobby.events`` / ``match.replies``: the lobby read model, requests |
| ``history.py`` | hand export and replay frames |
| ``ratings.py`` | profiles and the leaderboard from the rating service's read side |
| ``limits.py`` | token buckets, the HTTP rate-limit middleware, frame limits |
| ``gateway.py`` | ``Gateway``: what one process holds, its follower loop, ``start``/``stop`` |
| ``access.py`` | the access policy: who may see, watch, drive a table or see a hand |
| ``table_info.py`` | the lobby's word on a table, for the REST routes and the socket |
| ``connection.py`` | one WebSocket client: hello, commands, views pushed as they change |
| ``api.py`` | the REST routes, and the dependencies Litestar injects into them |
| ``app.py`` | the Litestar app factory; ``GatewayService``: a ``Gateway`` served (``run``) |
| ``cli.py`` | ``mahjong-planet gateway`` and the gateway's options of ``mahjong-planet run`` |
"""
