"""The peer lossy codecs, SZ3 (pysz) and ZFP (zfpy), behind one small interface.

Both get the same absolute error bound: SZ3 in ABS mode, ZFP in fixed-accuracy
mode with that tolerance. Both run single-threaded (pysz leaves SZ3's OpenMP
off by default; zfpy uses ZFP's serial path).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Callable

import numpy as np
import pysz
import zfpy


@dataclass
class PeerRun:
    """Best-of-N timings and the output of one peer at one bound."""

    compressed_bytes: int
    compress_seconds: float
    decompress_seconds: float
    recon: np.ndarray


def best_of(reps: int, fn: Callable[[], object]) -> tuple[float, object]:
    """Run ``fn`` ``reps`` times; return the fastest wall time and the last result."""
    best, result = float("inf"), None
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


class Sz3:
    """SZ3 through pysz, absolute error bound mode."""

    name = "sz3"

    @staticmethod
    def version() -> str:
        return f"pysz {version('pysz')}"

    @staticmethod
    def compress(data: np.ndarray, abs_bound: float) -> bytes:
        config = pysz.szConfig(data.shape)
        config.errorBoundMode = pysz.szErrorBoundMode.ABS
        config.absErrorBound = abs_bound
        compressed, _ratio = pysz.sz.compress(data, config)
        return compressed.tobytes()

    @staticmethod
    def decompress(blob: bytes, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        recon, _config = pysz.sz.decompress(np.frombuffer(blob, dtype=np.uint8), dtype, shape)
        return recon


class Zfp:
    """ZFP through zfpy, fixed-accuracy mode (tolerance = absolute bound)."""

    name = "zfp"

    @staticmethod
    def version() -> str:
        return f"zfpy {version('zfpy')}"

    @staticmethod
    def compress(data: np.ndarray, abs_bound: float) -> bytes:
        return zfpy.compress_numpy(data, tolerance=abs_bound)

    @staticmethod
    def decompress(blob: bytes, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        recon = zfpy.decompress_numpy(blob)
        if recon.dtype != dtype or recon.shape != tuple(shape):
            raise RuntimeError(f"zfpy returned {recon.dtype}{recon.shape}, expected {dtype}{shape}")
        return recon


PEERS = (Sz3, Zfp)


def run_peer(peer, data: np.ndarray, abs_bound: float, reps: int) -> PeerRun:
    """Compress and decompress ``data`` ``reps`` times each with ``peer``."""
    c_sec, blob = best_of(reps, lambda: peer.compress(data, abs_bound))
    d_sec, recon = best_of(reps, lambda: peer.decompress(blob, data.dtype, data.shape))
    return PeerRun(len(blob), c_sec, d_sec, recon)
