"""Auditing many hands: a summary of verdicts, in this process or split over worker processes.

The parallel form takes each hand as msgspec JSON (bytes). Where processes can be forked the
workers inherit the hands and are sent index ranges; elsewhere chunks of bytes are sent. Only
small tallies come back: nothing big is pickled.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Iterable, Iterator, Sequence
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
    hands: int = 0
    finished: int = 0
    passed: int = 0
    failed: int = 0
    problems: list[str] = field(default_factory=list)
    failed_hands: list[tuple[str, str]] = field(default_factory=list)

    def add(self, result: AuditResult) -> None:
        self.hands += 1
        if not result.finished:
            return
        self.finished += 1
        if result.ok:
            self.passed += 1
            return
        self.failed += 1
        if len(self.failed_hands) < self.max_problems:
            self.failed_hands.append((result.table_id, result.hand_id))
        room = self.max_problems - len(self.problems)
        where = f"table {result.table_id!r} hand {result.hand_id!r}"
        self.problems.extend(f"{where}: {p}" for p in result.problems[:room])

    def merge(self, other: _Tally) -> None:
        self.hands += other.hands
        self.finished += other.finished
        self.passed += other.passed
        self.failed += other.failed
        self.failed_hands.extend(other.failed_hands[: self.max_problems - len(self.failed_hands)])
        self.problems.extend(other.problems[: self.max_problems - len(self.problems)])

    def summary(self) -> AuditSummary:
        return AuditSummary(
            hands=self.hands,
            finished=self.finished,
            passed=self.passed,
            failed=self.failed,
            skipped=self.hands - self.finished,
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


_Job = tuple[list[EncodedHand], int]
"""A chunk of hands and the number of problems to keep."""


def _audit_chunk(job: _Job) -> _Tally:
    chunk, max_problems = job
    tally = _Tally(max_problems)
    for encoded in chunk:
        tally.add(audit_encoded_hand(encoded))
    return tally


def _chunks(hands: Iterable[EncodedHand], size: int, max_problems: int) -> Iterator[_Job]:
    chunk: list[EncodedHand] = []
    for h in hands:
        chunk.append(h)
        if len(chunk) == size:
            yield chunk, max_problems
            chunk = []
    if chunk:
        yield chunk, max_problems


_INHERITED: Sequence[EncodedHand] = ()
"""The hands of the running ``audit_encoded_hands``, for the workers it forks."""


def _take_chunks(counter: Any, chunks: int, size: int, max_problems: int) -> dict[int, _Tally]:
    """Audit chunks of ``_INHERITED`` until none is left, each time the next one nobody has
    taken (``counter``, in shared memory, is the next chunk's number): the tallies by chunk."""
    done: dict[int, _Tally] = {}
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= chunks:
            return done
        tally = _Tally(max_problems)
        for encoded in _INHERITED[i * size : (i + 1) * size]:
            tally.add(audit_encoded_hand(encoded))
        done[i] = tally


def _worker(counter: Any, chunks: int, size: int, max_problems: int, sender: Any) -> None:
    try:
        sender.send(_take_chunks(counter, chunks, size, max_problems))
    finally:
        sender.close()


def audit_encoded_hands(
    hands: Iterable[EncodedHand],
    processes: int = 2,
    chunk_size: int | None = None,
    max_problems: int = MAX_PROBLEMS,
) -> AuditSummary:
    """Audit hands given as msgspec JSON, split in chunks over ``processes`` processes.

    Where processes can be forked, this one audits too, with ``processes - 1`` forked
    workers; elsewhere a pool of ``processes`` workers does. Results are merged in input
    order, so the problems kept are the same as ``audit_hands`` would keep. With
    ``processes <= 1`` everything runs in this process. By default a chunk is about a 32nd of
    each process's share (8 to 256 hands): small enough that none idles long at the end.
    """
    total = _Tally(max_problems)
    if processes <= 1:
        for job in _chunks(hands, chunk_size or 256, max_problems):
            total.merge(_audit_chunk(job))
        return total.summary()
    if "fork" not in multiprocessing.get_all_start_methods():
        size = chunk_size or 64
        with multiprocessing.get_context().Pool(processes) as pool:
            for part in pool.imap(_audit_chunk, _chunks(hands, size, max_problems)):
                total.merge(part)
        return total.summary()
    # Forked workers inherit the hands, so none is pickled, piped and unpickled; every
    # process takes the next free chunk until none is left, and sends its tallies back at
    # the end. This process works too rather than wait: one fork fewer, and no pool's
    # threads. gc.freeze keeps the workers' collectors off the parent's objects (which they
    # would otherwise copy page by page as they touch them), and this one's collector off
    # the hands.
    global _INHERITED
    _INHERITED = hands if isinstance(hands, Sequence) else list(hands)
    size = chunk_size or max(8, min(256, len(_INHERITED) // (processes * 32)))
    chunks = -(-len(_INHERITED) // size)
    context = multiprocessing.get_context("fork")
    counter = context.Value("q", 0)
    gc.freeze()
    workers = []
    try:
        for _ in range(processes - 1):
            receiver, sender = context.Pipe(duplex=False)
            worker = context.Process(
                target=_worker, args=(counter, chunks, size, max_problems, sender), daemon=True
            )
            worker.start()
            sender.close()
            workers.append((worker, receiver))
        parts = _take_chunks(counter, chunks, size, max_problems)
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
        gc.unfreeze()
        _INHERITED = ()
    for i in range(chunks):
        total.merge(parts[i])
    return total.summary()
