"""The soak with faults (issue 10): ``python -m tests.soak.soak``, ``make soak``."""
