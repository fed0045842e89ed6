"""Sample fields and error metrics shared by the PRISM benchmark scripts.

A field is a raw little-endian array from shared/data whose file name carries
its shape (slowest to fastest, C order) and element type, for example
``navy_uwnd_132x73x144.f32``. Points equal to the field's fill value, and
non-finite points, are excluded from the value range and from every error
metric; the codecs still get the raw array as it is.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"  # real sample data lives beside the checkout

# File name -> fill value (None: every finite point is valid).
DEFAULT_FIELDS: dict[str, float | None] = {
    "echam5_t_17x96x192.f32": None,
    "navy_uwnd_132x73x144.f32": None,
    "levitus_temp_20x180x360.f32": -1e10,
    "etopo20_rose_540x1081.f32": None,
    "cosmo_hsurf_438x450.f32": None,
    "stageiv_precip_23x118x87.f32": None,
    "sdo_aia171_128x128.f64": None,
}

_NAME_RE = re.compile(r"^(?P<stem>.+?)_(?P<dims>\d+(?:x\d+)*)\.(?P<dtype>f32|f64)$")
_NUMPY_DTYPES = {"f32": "<f4", "f64": "<f8"}


@dataclass
class Field:
    """One raw array plus what the metrics need to know about it."""

    name: str            # file name without the extension, e.g. "navy_uwnd_132x73x144"
    path: Path
    dtype: str           # "f32" or "f64", as the mans CLI spells it
    dims: tuple[int, ...]
    fill: float | None
    data: np.ndarray     # shaped, native dtype
    valid: np.ndarray    # bool mask: finite and not fill
    value_range: float   # max - min over valid points

    @property
    def count(self) -> int:
        return int(self.data.size)

    @property
    def raw_bytes(self) -> int:
        return int(self.data.nbytes)

    @property
    def dims_text(self) -> str:
        return "x".join(str(d) for d in self.dims)

    @property
    def fill_fraction(self) -> float:
        return 1.0 - float(self.valid.mean())


def parse_name(file_name: str) -> tuple[str, tuple[int, ...], str]:
    """Return (name, dims, dtype) from a file name like ``a_17x96x192.f32``."""
    m = _NAME_RE.match(file_name)
    if not m:
        raise ValueError(f"cannot read shape and type from file name '{file_name}'")
    dims = tuple(int(d) for d in m["dims"].split("x"))
    return file_name.rsplit(".", 1)[0], dims, m["dtype"]


def load_field(path: Path, fill: float | None) -> Field:
    """Read a raw array and compute its validity mask and value range."""
    name, dims, dtype = parse_name(path.name)
    data = np.fromfile(path, dtype=_NUMPY_DTYPES[dtype])
    if data.size != math.prod(dims):
        raise ValueError(f"{path}: {data.size} values, file name says {dims}")
    data = data.reshape(dims)
    valid = np.isfinite(data)
    if fill is not None:
        valid &= data != data.dtype.type(fill)
    if not valid.any():
        raise ValueError(f"{path}: no valid (finite, non-fill) values")
    values = data[valid]
    value_range = float(values.max()) - float(values.min())
    return Field(name, path, dtype, dims, fill, data, valid, value_range)


def load_fields(data_dir: Path, only: list[str] | None = None) -> list[Field]:
    """Load the default fields, optionally only those whose name contains a word of ``only``."""
    fields = []
    for file_name, fill in DEFAULT_FIELDS.items():
        if only and not any(word in file_name for word in only):
            continue
        fields.append(load_field(data_dir / file_name, fill))
    if not fields:
        raise SystemExit(f"no field matches {only}")
    return fields


def error_metrics(field: Field, recon: np.ndarray, abs_bound: float | None) -> dict:
    """Max abs error, PSNR and bound check over valid points; fill kept exactly?

    PSNR = 20 log10(range) - 10 log10(mse) with range and mse over valid points.
    """
    recon = np.asarray(recon).reshape(field.dims)
    diff = recon[field.valid].astype(np.float64) - field.data[field.valid].astype(np.float64)
    max_abs = float(np.max(np.abs(diff)))
    mse = float(np.mean(diff * diff))
    psnr = math.inf if mse == 0.0 else 20 * math.log10(field.value_range) - 10 * math.log10(mse)
    out = {
        "max_abs_error": max_abs,
        "psnr": psnr,
        "max_err_over_bound": max_abs / abs_bound if abs_bound else "",
        "bound_met": (max_abs <= abs_bound) if abs_bound is not None else "",
        "fill_kept": "",
    }
    if not field.valid.all():
        invalid = ~field.valid
        out["fill_kept"] = bool(np.array_equal(recon[invalid], field.data[invalid], equal_nan=True))
    return out
