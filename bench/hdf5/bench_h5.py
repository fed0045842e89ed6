"""HDF5 filter benchmark: the mans filter against gzip, Debian's
hdf5-filter-plugin (LZ4, BZIP2) and hdf5plugin's Blosc, Bitshuffle, Zstd,
SZ3 and ZFP, all through Debian's h5py/HDF5 1.10.8 in one run.

For each real chunked dataset and filter: stored size (ratio = raw / stored),
write and read throughput (raw MB/s, median of --repeat runs, file in
/dev/shm or --tmp to keep the disk out of it) and, for lossy filters, the
max abs error against the bound. Usage: see bench/hdf5/run.sh.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

MANS_ID = 36731


def fields(data_dir):
    def load(name, dt, shape):
        return np.fromfile(os.path.join(data_dir, name), dtype=dt).reshape(shape)

    return [  # name, array, chunks, fill
        ("exafel u16", load("exafel_1024kB.u16", "<u2", (1024, 512)), (128, 512), None),
        ("oisst i16", load("oisst_sst_1x1x90x180.i16", "<i2", (90, 180)), (45, 180), None),
        ("navy f32", load("navy_uwnd_132x73x144.f32", "<f4", (132, 73, 144)), (12, 73, 144), None),
        ("echam5 f32", load("echam5_t_17x96x192.f32", "<f4", (17, 96, 192)), (17, 48, 192), None),
        ("levitus f32", load("levitus_temp_20x180x360.f32", "<f4", (20, 180, 360)), (4, 90, 180), -1e10),
    ]


def mans_opts(mans, *args):
    ud = subprocess.run([mans, "h5-args", *args], check=True, capture_output=True, text=True).stdout.strip()
    return tuple(int(w) for w in ud.split("=", 1)[1].split(",")[3:])


def measure(path, arr, chunks, fill, kwargs, repeat):
    writes, reads = [], []
    stored = 0
    back = None
    for _ in range(repeat):
        if os.path.exists(path):
            os.remove(path)
        t0 = time.perf_counter()
        with h5py.File(path, "w") as f:
            d = f.create_dataset("x", data=arr, chunks=chunks, fillvalue=fill, **kwargs)
            f.flush()
            stored = d.id.get_storage_size()
        writes.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with h5py.File(path, "r") as f:
            back = f["x"][...]
        reads.append(time.perf_counter() - t0)
    return stored, statistics.median(writes), statistics.median(reads), back


def max_error(a, b, fill):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    keep = np.isfinite(a64)
    if fill is not None:
        keep &= a64 != fill
        if not np.array_equal(a[~keep], b[~keep]):
            return float("inf")
    return float(np.abs(a64[keep] - b64[keep]).max()) if keep.any() else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mans", required=True, help="the mans CLI (for h5-args)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True, help="markdown table to write")
    ap.add_argument("--csv")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tmp", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    args = ap.parse_args()
    tmpdir = tempfile.mkdtemp(dir=args.tmp)
    path = os.path.join(tmpdir, "bench.h5")
    rows = []
    data = fields(args.data)

    def run(fname, arr, chunks, fill, label, kwargs, bound=None):
        raw = arr.nbytes
        try:
            stored, tw, tr, back = measure(path, arr, chunks, fill, kwargs, args.repeat)
        except Exception as e:  # a peer that cannot take this dtype
            print(f"{fname:12} {label:26} n/a ({type(e).__name__})", flush=True)
            return
        err = 0.0 if bound is None else max_error(arr, back, fill)
        exact = bound is not None or np.array_equal(arr, back)
        met = exact if bound is None else err <= bound
        row = dict(field=fname, filter=label, bound=bound, ratio=raw / stored, write=raw / tw / 1e6,
                   read=raw / tr / 1e6, max_err=err, ok=met)
        rows.append(row)
        print(f"{fname:12} {label:26} ratio {row['ratio']:7.2f}  write {row['write']:8.1f} MB/s  "
              f"read {row['read']:8.1f} MB/s  err {err:.3g} {'ok' if met else 'MISSED'}", flush=True)

    # Lossless. Debian's plugins first: hdf5plugin re-registers LZ4/BZIP2 on import.
    for fname, arr, chunks, fill in data:
        run(fname, arr, chunks, fill, "none", {})
        run(fname, arr, chunks, fill, "gzip 6", dict(compression="gzip", compression_opts=6))
        run(fname, arr, chunks, fill, "gzip 6 + shuffle", dict(compression="gzip", compression_opts=6, shuffle=True))
        run(fname, arr, chunks, fill, "lz4 (Debian plugin)", dict(compression=32004, compression_opts=(0,)))
        run(fname, arr, chunks, fill, "bzip2 (Debian plugin)", dict(compression=307, compression_opts=(9,)))
        run(fname, arr, chunks, fill, "mans lossless", dict(compression=MANS_ID, compression_opts=mans_opts(args.mans, "--lossless")))
    import hdf5plugin  # noqa: E402  (after the Debian plugins, see above)

    for fname, arr, chunks, fill in data:
        run(fname, arr, chunks, fill, "blosc zstd5 + shuffle",
            hdf5plugin.Blosc(cname="zstd", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))
        run(fname, arr, chunks, fill, "bitshuffle + lz4", hdf5plugin.Bitshuffle(cname="lz4"))
        run(fname, arr, chunks, fill, "zstd 3", hdf5plugin.Zstd(clevel=3))

    # Lossy: the same absolute bounds for every codec (rel x range of the real values).
    for fname, arr, chunks, fill in data:
        if arr.dtype.kind != "f":
            continue
        real = arr[np.isfinite(arr)].astype(np.float64)
        if fill is not None:
            real = real[real != fill]
        span = float(real.max() - real.min())
        for rel in (1e-2, 1e-3, 1e-4):
            eb = rel * span
            run(fname, arr, chunks, fill, f"mans PRISM abs {rel:g}", dict(compression=MANS_ID,
                compression_opts=mans_opts(args.mans, "--error-bound", repr(eb))), eb)
            run(fname, arr, chunks, fill, f"SZ3 abs {rel:g}", hdf5plugin.SZ3(absolute=eb), eb)
            run(fname, arr, chunks, fill, f"ZFP accuracy {rel:g}", hdf5plugin.Zfp(accuracy=eb), eb)

    with open(args.out, "w") as out:
        out.write("| field | filter | ratio | write MB/s | read MB/s | max abs error | bound met |\n")
        out.write("|---|---|---:|---:|---:|---:|---|\n")
        for r in rows:
            bound = "" if r["bound"] is None else f"{r['max_err']:.3g} (bound {r['bound']:.3g})"
            out.write(f"| {r['field']} | {r['filter']} | {r['ratio']:.2f} | {r['write']:.1f} | {r['read']:.1f} | "
                      f"{bound or 'lossless'} | {'yes' if r['ok'] else '**no**'} |\n")
    if args.csv:
        with open(args.csv, "w") as out:
            out.write("field,filter,bound,ratio,write_MBps,read_MBps,max_abs_error,bound_met\n")
            for r in rows:
                out.write(f"{r['field']},{r['filter']},{r['bound'] or ''},{r['ratio']:.4f},{r['write']:.2f},"
                          f"{r['read']:.2f},{r['max_err']:.6g},{int(r['ok'])}\n")
    os.remove(path) if os.path.exists(path) else None
    os.rmdir(tmpdir)


if __name__ == "__main__":
    sys.exit(main())
