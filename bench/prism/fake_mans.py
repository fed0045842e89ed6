#!/usr/bin/env python3
"""A stand-in for the mans CLI's lossy mode, to test the harness without PRISM.

It speaks the same command line and JSON as the real CLI (see mans_cli.py) but
compresses naively: values are quantized to a grid of 2*eb and zlib-packed,
one level per power-of-two coarsening, so a read up to a coarser bound or a
PSNR target "reads" only the coarser level's bytes. Its numbers mean nothing;
only the plumbing is real.

    compare_peers.py --mans bench/prism/fake_mans.py --fields echam5 --reps 1 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
import time
import zlib

import numpy as np

DTYPES = {"f32": "<f4", "f64": "<f8"}
LEVELS = 24                       # level k quantizes with eb * 2**k
HEADER = struct.Struct("<4sBdQ")  # magic, dtype code, eb, count


def quantize(x: np.ndarray, eb: float) -> np.ndarray:
    return np.round(x / (2 * eb)).astype(np.int64)


def compress(args) -> dict:
    data = np.fromfile(args.input, dtype=DTYPES[args.dtype]).astype(np.float64)
    start = time.perf_counter()
    levels = [zlib.compress(quantize(data, args.error_bound * 2**k).tobytes(), 6) for k in range(LEVELS)]
    index = struct.pack(f"<{LEVELS}Q", *map(len, levels))
    blob = HEADER.pack(b"FAKE", list(DTYPES).index(args.dtype), args.error_bound, data.size) + index
    blob += b"".join(reversed(levels))   # coarsest first, as a progressive stream would be
    seconds = time.perf_counter() - start
    with open(args.output, "wb") as f:
        f.write(blob)
    return {"compressed_bytes": len(blob), "raw_bytes": data.size * np.dtype(DTYPES[args.dtype]).itemsize,
            "seconds": seconds, "max_abs_error_bound": args.error_bound}


def decode_level(blob: bytes, sizes: list[int], k: int, eb: float) -> tuple[np.ndarray, int]:
    """Values of level k and the bytes a reader needs for it (header + levels up to k)."""
    head = HEADER.size + 8 * LEVELS
    offset = head + sum(sizes[k + 1:])          # levels are stored coarsest first
    q = np.frombuffer(zlib.decompress(blob[offset:offset + sizes[k]]), dtype=np.int64)
    return q * (2 * eb * 2**k), offset + sizes[k]


def psnr(orig: np.ndarray, recon: np.ndarray) -> float:
    mse = float(np.mean((orig - recon) ** 2))
    return math.inf if mse == 0 else 20 * math.log10(np.ptp(orig)) - 10 * math.log10(mse)


def decompress(args) -> dict:
    start = time.perf_counter()
    blob = open(args.input, "rb").read()
    _magic, code, eb, _count = HEADER.unpack_from(blob)
    sizes = list(struct.unpack_from(f"<{LEVELS}Q", blob, HEADER.size))
    finest, _ = decode_level(blob, sizes, 0, eb)
    k = 0
    if args.error_bound is not None:
        k = max(0, min(LEVELS - 1, int(math.floor(math.log2(args.error_bound / eb)))))
    elif args.psnr is not None:
        k = next((j for j in reversed(range(LEVELS))
                  if psnr(finest, decode_level(blob, sizes, j, eb)[0]) >= args.psnr + 1), 0)
    values, bytes_read = decode_level(blob, sizes, k, eb)
    values.astype(list(DTYPES.values())[code]).tofile(args.output)
    return {"seconds": time.perf_counter() - start, "bytes_read": bytes_read,
            "max_abs_error_bound": eb * 2**k}


def main() -> int:
    p = argparse.ArgumentParser(prog="fake_mans")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compress")
    c.add_argument("-t", "--dtype", choices=list(DTYPES), required=True)
    c.add_argument("--dims")
    c.add_argument("--error-bound", type=float, required=True)
    d = sub.add_parser("decompress")
    d.add_argument("--error-bound", type=float)
    d.add_argument("--psnr", type=float)
    for s in (c, d):
        s.add_argument("-i", "--input", required=True)
        s.add_argument("-o", "--output", required=True)
        s.add_argument("--json", action="store_true")
        s.add_argument("--threads", type=int)
    args = p.parse_args()
    summary = compress(args) if args.cmd == "compress" else decompress(args)
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
