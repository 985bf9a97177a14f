"""``deploy/cluster.py`` for the tests and benches that run the distributed mode."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def cluster_module() -> ModuleType:
    """``deploy/cluster.py`` (not a package) as a module."""
    spec = importlib.util.spec_from_file_location("mahjong_cluster", ROOT / "deploy" / "cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports free on 127.0.0.1 just now."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports
