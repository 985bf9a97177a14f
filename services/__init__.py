"""Mahjong Planet services: the pure rules engine and the processes around it."""
