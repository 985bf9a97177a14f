"""The matchmaking service: the lobby, private tables, Quick Play."""
