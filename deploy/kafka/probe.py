"""Readiness probe for the development Kafka broker, standard library only.

Usage: python3 probe.py HOST:PORT [--brokers N] [--versions]

Sends an ApiVersions v0 request and, when the broker offers it, a Metadata v4 request for no
topics. Exits 0 when the broker answered and listed at least N (default 1) unfenced brokers,
1 otherwise: with N the cluster's size, every node is up and registered. With --versions it
also prints the version range the broker accepts for the requests aiokafka's transactional
producer sends (aiokafka only speaks v0 of those).
"""

from __future__ import annotations

import socket
import struct
import sys

API_VERSIONS = 18
METADATA = 3
TXN_APIS = {
    22: "InitProducerId",
    24: "AddPartitionsToTxn",
    25: "AddOffsetsToTxn",
    26: "EndTxn",
    28: "TxnOffsetCommit",
}


def _request(sock: socket.socket, api_key: int, version: int, corr: int, body: bytes) -> bytes:
    client_id = b"mahjong-planet-probe"
    header = struct.pack(">hhih", api_key, version, corr, len(client_id)) + client_id
    payload = header + body
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    size = struct.unpack(">i", _read(sock, 4))[0]
    data = _read(sock, size)
    (got_corr,) = struct.unpack(">i", data[:4])
    if got_corr != corr:
        raise RuntimeError(f"correlation id {got_corr} != {corr}")
    return data[4:]


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        buf += chunk
    return buf


def probe(host: str, port: int, show_versions: bool, brokers: int = 1) -> bool:
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.settimeout(5)
        resp = _request(sock, API_VERSIONS, 0, 1, b"")
        error, count = struct.unpack(">hi", resp[:6])
        if error != 0:
            print(f"ApiVersions error {error}", file=sys.stderr)
            return False
        versions: dict[int, tuple[int, int]] = {}
        for i in range(count):
            key, lo, hi = struct.unpack(">hhh", resp[6 + 6 * i : 12 + 6 * i])
            versions[key] = (lo, hi)
        if show_versions:
            for key, name in TXN_APIS.items():
                lo, hi = versions.get(key, (-1, -1))
                verdict = "ok for aiokafka (v0)" if lo == 0 else "REJECTS v0"
                print(f"{name:<20} v{lo}-v{hi}  {verdict}")
        lo, hi = versions.get(METADATA, (-1, -1))
        if not lo <= 4 <= hi:
            return True  # answered ApiVersions; cannot check further with this probe
        # Metadata v4: topics = [] (no topics), allow_auto_topic_creation = false
        resp = _request(sock, METADATA, 4, 2, struct.pack(">ib", 0, 0))
        _throttle, n_brokers = struct.unpack(">ii", resp[:8])
        return int(n_brokers) >= max(brokers, 1)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    host, _, port = sys.argv[1].rpartition(":")
    rest = sys.argv[2:]
    brokers = int(rest[rest.index("--brokers") + 1]) if "--brokers" in rest else 1
    try:
        return 0 if probe(host, int(port), "--versions" in rest, brokers) else 1
    except (OSError, RuntimeError, struct.error) as exc:
        if "--versions" in rest:
            print(f"probe failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
