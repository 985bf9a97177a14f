"""Auditing many hands: a summary of verdicts, in this process or split over worker processes.

The parallel form takes each hand as msgspec JSON (bytes). The workers are given all the
hands when they start (inherited, where processes are forked) and take chunks of them by
number; only small tallies come back.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from schemas import events as ev
from schemas.table import EventEnvelope
from services.audit.encoded_audit import audit_if_exact
from services.audit.hand_audit import AuditResult, audit_hand

MAX_PROBLEMS = 100
"""How many problems (and failed hands) a summary keeps, first come first kept."""

EncodedHand = bytes | Sequence[bytes]
"""A hand as msgspec JSON: one array of its events, or its log records in order."""

_HAND = msgspec.json.Decoder(list[ev.Event])
_RECORD = msgspec.json.Decoder(EventEnvelope)


@dataclass(frozen=True, slots=True)
class AuditSummary:
    """Counts over a batch of hands and the first problems found.

    ``hands = passed + failed + skipped``; ``finished = passed + failed``. ``problems`` holds
    up to ``MAX_PROBLEMS`` problems, each prefixed with its table and hand.
    """

    hands: int = 0
    finished: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    failed_hands: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No finished hand failed (unfinished hands are skipped, not failures)."""
        return self.failed == 0


@dataclass(slots=True)
class _Tally:
    """A summary being built; tallies of parts of a batch merge in order."""

    max_problems: int = MAX_PROBLEMS
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # passed, failed, skipped
    problems: list[str] = field(default_factory=list)
    failed_hands: list[tuple[str, str]] = field(default_factory=list)

    def add(self, result: AuditResult) -> None:
        if not result.finished:
            self.counts[2] += 1
        elif result.ok:
            self.counts[0] += 1
        else:
            self.counts[1] += 1
            where = f"table {result.table_id!r} hand {result.hand_id!r}"
            self._keep(
                [(result.table_id, result.hand_id)], [f"{where}: {p}" for p in result.problems]
            )

    def merge(self, other: _Tally) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self._keep(other.failed_hands, other.problems)

    def _keep(self, failed_hands: list[tuple[str, str]], problems: list[str]) -> None:
        """The first ``max_problems`` problems and failed hands are kept."""
        self.failed_hands.extend(failed_hands[: self.max_problems - len(self.failed_hands)])
        self.problems.extend(problems[: self.max_problems - len(self.problems)])

    def summary(self) -> AuditSummary:
        passed, failed, skipped = self.counts
        return AuditSummary(
            hands=passed + failed + skipped,
            finished=passed + failed,
            passed=passed,
            failed=failed,
            skipped=skipped,
            problems=self.problems,
            failed_hands=self.failed_hands,
        )


def audit_hands(
    hands: Iterable[Sequence[ev.Event]], max_problems: int = MAX_PROBLEMS
) -> AuditSummary:
    """Audit each hand's log in turn, in this process."""
    tally = _Tally(max_problems)
    for events in hands:
        tally.add(audit_hand(events))
    return tally.summary()


def decode_hand(encoded: EncodedHand) -> list[ev.Event]:
    """A hand's events from msgspec JSON: an array of events, or the hand's log records
    (``EventEnvelope`` documents, one per event, as ``table.events`` holds them)."""
    if isinstance(encoded, bytes | bytearray | memoryview):
        return _HAND.decode(encoded)
    return [_RECORD.decode(b).event for b in encoded]


def audit_encoded_hand(encoded: EncodedHand) -> AuditResult:
    """Audit one hand given as msgspec JSON, with the same verdict as ``audit_hand`` on its
    decoded events. A log that does not decode fails with the decoder's reason.

    An honest log is proven by re-deciding it and comparing bytes (``encoded_audit``); any
    other is decoded and audited in full, which names its problems.
    """
    exact = audit_if_exact(encoded)
    if exact is not None:
        return exact
    try:
        events = decode_hand(encoded)
    except msgspec.DecodeError as exc:
        return AuditResult("", "", finished=True, ok=False, problems=[f"undecodable log: {exc}"])
    return audit_hand(events)


def _take_chunks(
    hands: Sequence[EncodedHand], counter: Any, chunks: int, size: int, max_problems: int
) -> dict[int, _Tally]:
    """Audit chunks of ``hands`` until none is left, each time the next one nobody has taken
    (``counter``, in shared memory, is the next chunk's number): the tallies by chunk."""
    done: dict[int, _Tally] = {}
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= chunks:
            return done
        tally = _Tally(max_problems)
        for encoded in hands[i * size : (i + 1) * size]:
            tally.add(audit_encoded_hand(encoded))
        done[i] = tally


def _worker(
    hands: Sequence[EncodedHand],
    counter: Any,
    chunks: int,
    size: int,
    max_problems: int,
    sender: Any,
) -> None:
    try:
        sender.send(_take_chunks(hands, counter, chunks, size, max_problems))
    finally:
        sender.close()


def _context() -> Any:
    # Forked workers inherit the hands, so none is pickled, piped and unpickled; where
    # processes cannot be forked, each worker is sent them once, as its arguments.
    return multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )


def audit_encoded_hands(
    hands: Iterable[EncodedHand],
    processes: int = 2,
    chunk_size: int | None = None,
    max_problems: int = MAX_PROBLEMS,
) -> AuditSummary:
    """Audit hands given as msgspec JSON, split in chunks over ``processes`` processes: this
    one and ``processes - 1`` workers started for the batch.

    Every process takes the next chunk nobody has taken until none is left, so none idles
    while another has a queue; results are merged in input order, so the problems kept are
    the same as ``audit_hands`` would keep. With ``processes <= 1`` everything runs in this
    process. By default a chunk is about a 32nd of each process's share (8 to 256 hands):
    small enough that none idles long at the end.
    """
    total = _Tally(max_problems)
    if processes <= 1:
        for encoded in hands:
            total.add(audit_encoded_hand(encoded))
        return total.summary()
    hands = hands if isinstance(hands, Sequence) else list(hands)
    size = chunk_size or max(8, min(256, len(hands) // (processes * 32)))
    chunks = -(-len(hands) // size)
    context = _context()
    counter = context.Value("q", 0)
    workers = []
    try:
        for _ in range(processes - 1):
            receiver, sender = context.Pipe(duplex=False)
            worker = context.Process(
                target=_worker,
                args=(hands, counter, chunks, size, max_problems, sender),
                daemon=True,
            )
            worker.start()
            sender.close()
            workers.append((worker, receiver))
        # This process works too rather than wait: one worker fewer to start.
        parts = _take_chunks(hands, counter, chunks, size, max_problems)
        for worker, receiver in workers:
            try:
                parts.update(receiver.recv())
            except EOFError:
                worker.join()
                raise RuntimeError(
                    f"audit worker {worker.pid} stopped (exit code {worker.exitcode})"
                ) from None
            worker.join()
    finally:
        for worker, _ in workers:  # after a failure here, none is left running
            if worker.is_alive():
                worker.terminate()
                worker.join()
    for i in range(chunks):
        total.merge(parts[i])
    return total.summary()
