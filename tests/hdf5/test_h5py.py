"""test_h5py.py MANS_CLI DATA_DIR TMP - the mans filter from Python.

Debian's python3-h5py (the same HDF5 1.10 library) writes and reads real
fields through the plugin on HDF5_PLUGIN_PATH: integers bit-exact, floats
within absolute and relative bounds with NaN and fill values exact, the
cd_values built by `mans h5-args`, and a progressive read at a coarser bound
selected by MANS_H5_READ_TARGET in a fresh process.
"""
import os
import subprocess
import sys

import h5py
import numpy as np

FILTER_ID = int(os.environ.get("MANS_H5_FILTER_ID", "36731"))  # the build's ID (ctest passes it)
mans, data_dir, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)
passed = failed = 0


def check(what, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what} {detail}")


def opts(*args):
    """cd_values from `mans h5-args` (UD=id,flag,n,v1,...)."""
    out = subprocess.run([mans, "h5-args", *args], check=True, capture_output=True, text=True).stdout.strip()
    words = [int(w) for w in out.split("=", 1)[1].split(",")]
    assert words[0] == FILTER_ID and words[2] == len(words) - 3
    return tuple(words[3:])


def load(name, dtype, shape):
    return np.fromfile(os.path.join(data_dir, name), dtype=dtype).reshape(shape)


check("h5py sees the plugin", h5py.h5z.filter_avail(FILTER_ID))

exafel = load("exafel_1024kB.u16", "<u2", (1024, 512))
oisst = load("oisst_sst_1x1x90x180.i16", "<i2", (90, 180))
echam = load("echam5_t_17x96x192.f32", "<f4", (17, 96, 192)).copy()
echam.flat[::211] = np.nan
levitus = load("levitus_temp_20x180x360.f32", "<f4", (20, 180, 360))
sdo = load("sdo_aia171_128x128.f64", "<f8", (128, 128))

path = os.path.join(tmp, "py.h5")
with h5py.File(path, "w") as f:
    f.create_dataset("exafel", data=exafel, chunks=(100, 300), compression=FILTER_ID, compression_opts=opts("--lossless"))
    f.create_dataset("oisst64", data=oisst.astype("<i8"), chunks=(32, 50), compression=FILTER_ID)  # no opts: lossless
    f.create_dataset("echam", data=echam, chunks=(5, 40, 100), compression=FILTER_ID,
                     compression_opts=opts("--error-bound", "0.01"))
    f.create_dataset("levitus", data=levitus, chunks=(7, 64, 100), fillvalue=np.float32(-1e10),
                     compression=FILTER_ID, compression_opts=opts("--error-bound", "1e-4", "--rel"))
    f.create_dataset("sdo", data=sdo, chunks=(50, 60), compression=FILTER_ID,
                     compression_opts=opts("--error-bound", "0.05"))

with h5py.File(path, "r") as f:
    check("dataset reports the mans filter", str(FILTER_ID) in f["echam"]._filters)
    check("u16 bit-exact", np.array_equal(f["exafel"][...], exafel))
    check("i64 bit-exact (no cd_values)", np.array_equal(f["oisst64"][...], oisst.astype("<i8")))
    back = f["echam"][...]
    nan = np.isnan(echam)
    check("f32 NaN positions exact", np.array_equal(np.isnan(back), nan))
    err = np.abs(back[~nan].astype(np.float64) - echam[~nan])
    check("f32 within 0.01", err.max() <= 0.01, f"max {err.max()}")
    check("f32 really lossy", err.max() > 0)
    lev = f["levitus"][...]
    fill = levitus == np.float32(-1e10)
    check("levitus fill -1e10 exact", np.array_equal(lev[fill], levitus[fill]))
    real = levitus[~fill].astype(np.float64)
    eb = 1e-4 * (real.max() - real.min())  # each chunk's range is inside the field's
    err = np.abs(lev[~fill].astype(np.float64) - real)
    check("levitus within 1e-4 x range", err.max() <= eb, f"max {err.max()} > {eb}")
    s = f["sdo"][...]
    check("f64 within 0.05", np.abs(s - sdo).max() <= 0.05)
    part = f["echam"][3:9, 10:70, 150:]
    check("partial (hyperslab) read matches", np.array_equal(part, back[3:9, 10:70, 150:], equal_nan=True))
size = os.path.getsize(path)
raw = sum(a.nbytes for a in (exafel, oisst.astype("<i8"), echam, levitus, sdo))
check(f"file {size} bytes < raw {raw} / 3", size * 3 < raw)

# Progressive: the same file read at a coarser bound, selected by the
# environment in a fresh process (HDF5 reads the plugin setting per chunk).
probe = (
    "import h5py, numpy as np, sys\n"
    "with h5py.File(sys.argv[1], 'r') as f: np.save(sys.argv[2], f['echam'][...])\n"
)
coarse_npy = os.path.join(tmp, "coarse.npy")
env = dict(os.environ, MANS_H5_READ_TARGET="abs:0.5")
subprocess.run([sys.executable, "-c", probe, path, coarse_npy], check=True, env=env)
coarse = np.load(coarse_npy)
err = np.abs(coarse[~nan].astype(np.float64) - echam[~nan])
check("MANS_H5_READ_TARGET=abs:0.5: within 0.5", err.max() <= 0.5, f"max {err.max()}")
check("MANS_H5_READ_TARGET=abs:0.5: coarser than the archive", err.max() > 0.01)
env["MANS_H5_READ_TARGET"] = "no-such-target"
r = subprocess.run([sys.executable, "-c", probe, path, coarse_npy], env=env, capture_output=True, text=True)
check("a bad MANS_H5_READ_TARGET is a read error", r.returncode != 0 and "MANS_H5_READ_TARGET" in r.stderr,
      r.stderr[-300:])

print(f"h5py: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
