"""Whether a consumer that stores its own input position is moving.

A record that fails its transaction every time stops a consumer without stopping its
process: the loop runs, ``/healthz`` answers, and the records behind it wait for ever
(issue 17). ``Progress`` notes when the position last advanced, or when the consumer last
found nothing to read (caught up: an empty read, which also covers the commit marker at the
end of a transactional topic). The time since the later of the two, while the loop keeps
failing, is how long the consumer has been stalled; ``/readyz`` answers 503 with the reason
past ``stall_after_s`` and ``mahjong_consumer_stalled_seconds`` carries it to the alert.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import Gauge

STALLED = Gauge(
    "mahjong_consumer_stalled_seconds",
    "Seconds since a consumer last advanced its stored position or found its input read to "
    "the end (0 while it moves; grows while records wait and every attempt fails)",
    ["service", "topic"],
)

STALL_AFTER_S = 60.0
"""How long without progress, while records wait, makes a consumer not ready."""


class Progress:
    """The progress of one consumer on one input topic (fed by its loop)."""

    def __init__(
        self,
        topic: str,
        stall_after_s: float = STALL_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.topic = topic
        self.stall_after_s = stall_after_s
        self.clock = clock
        self.position = 0
        self.since = clock()
        self.error = ""
        self.failures = 0

    def advanced(self, position: int) -> None:
        """The stored position moved to ``position``."""
        self.position = position
        self.since = self.clock()
        self.error = ""
        self.failures = 0

    def caught_up(self, position: int | None = None) -> None:
        """A read found nothing after the position: nothing waits."""
        if position is not None:
            self.position = position
        self.since = self.clock()
        self.error = ""
        self.failures = 0

    def failed(self, reason: str) -> None:
        """An attempt to advance failed (the position stays); ``reason`` is for /readyz."""
        self.error = reason
        self.failures += 1

    def stalled_s(self) -> float:
        """Seconds without progress while the consumer has work (0 when it has none)."""
        return max(0.0, self.clock() - self.since)

    @property
    def stalled(self) -> bool:
        return self.stalled_s() >= self.stall_after_s

    def reason(self) -> str:
        """Why the consumer is not ready, for the /readyz body and the logs."""
        text = (
            f"{self.topic}: no progress past offset {self.position} for "
            f"{self.stalled_s():.0f} s while records wait"
        )
        if self.failures:
            text += f" ({self.failures} failed attempts; last: {self.error})"
        return text
