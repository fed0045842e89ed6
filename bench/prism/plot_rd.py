#!/usr/bin/env python3
"""Plots from a compare_peers.py result CSV (PNG, matplotlib Agg backend).

    rate_distortion.png   bits per value vs PSNR, one panel per field, one line
                          per codec: SZ3, ZFP, PRISM direct, PRISM progressive
                          (read from the finest archive; bits = 8 * bytes_read / count)
    bytes_vs_bound.png    bytes vs relative bound (log-log), one panel per field:
                          PRISM progressive bytes read against each codec's own archive

    plot_rd.py [--csv RESULTS.csv] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from report import flag, num, short_name  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parent / "results"
CSV_NAME = "prism_vs_peers.csv"

# (codec, mode) -> label and style; order is legend order.
SERIES = {
    ("sz3", "direct"): ("SZ3", dict(color="tab:blue", marker="o")),
    ("zfp", "direct"): ("ZFP", dict(color="tab:orange", marker="s")),
    ("mans", "direct"): ("PRISM direct", dict(color="tab:green", marker="^")),
    ("mans", "progressive"): ("PRISM progressive", dict(color="tab:red", marker="v", linestyle="--")),
    ("mans", "progressive_psnr"): ("PRISM progressive (PSNR target)",
                                   dict(color="tab:purple", marker="x", linestyle=":")),
}


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def group(rows: list[dict]) -> dict[str, dict[tuple[str, str], list[dict]]]:
    """field -> (codec, mode) -> rows."""
    out: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        out[r["field"]][(r["codec"], r["mode"])].append(r)
    return out


def panel_grid(count: int) -> tuple[plt.Figure, list[plt.Axes]]:
    """A figure with ``count`` panels, at most three per row."""
    cols = min(3, count)
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.8 * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def finite_points(rows: list[dict], x_key: str, y_key: str) -> tuple[list[float], list[float]]:
    """(x, y) pairs with finite values, sorted by x."""
    pts = sorted((num(r[x_key]), num(r[y_key])) for r in rows)
    pts = [(x, y) for x, y in pts if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)]
    return [p[0] for p in pts], [p[1] for p in pts]


def mark_violations(ax: plt.Axes, rows: list[dict], x_key: str, y_key: str) -> None:
    """Circle the points whose bound or target was missed."""
    bad = [r for r in rows if flag(r["bound_met"]) is False]
    xs, ys = finite_points(bad, x_key, y_key)
    if xs:
        ax.scatter(xs, ys, s=140, facecolors="none", edgecolors="black", linewidths=1.2, zorder=5)


def finish(fig: plt.Figure, axes: list[plt.Axes], path: Path, title: str) -> None:
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rate_distortion(by_field: dict, path: Path) -> None:
    """Bits per value (x) vs PSNR (y); unmarked infinite PSNR (lossless) points are dropped."""
    fig, axes = panel_grid(len(by_field))
    for ax, (field, series) in zip(axes, by_field.items()):
        for key, (label, style) in SERIES.items():
            rows = series.get(key, [])
            xs, ys = finite_points(rows, "bits_per_value", "psnr")
            if xs:
                ax.plot(xs, ys, label=label, **style)
                mark_violations(ax, rows, "bits_per_value", "psnr")
        ax.set_title(short_name(field))
        ax.set_xlabel("bits per value")
        ax.set_ylabel("PSNR (dB)")
        ax.grid(True, alpha=0.3)
    finish(fig, axes, path, "Rate-distortion (circled: bound missed)")


def plot_bytes_vs_bound(by_field: dict, path: Path) -> None:
    """Relative bound (x) vs bytes: progressive bytes read and each codec's archive size."""
    fig, axes = panel_grid(len(by_field))
    for ax, (field, series) in zip(axes, by_field.items()):
        for key, (label, style) in SERIES.items():
            if key[1] == "progressive_psnr":
                continue
            rows = series.get(key, [])
            xs, ys = finite_points(rows, "rel_bound", "bytes_read")
            if xs:
                ax.plot(xs, ys, label=label, **style)
                mark_violations(ax, rows, "rel_bound", "bytes_read")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.invert_xaxis()
        ax.set_title(short_name(field))
        ax.set_xlabel("relative bound r (eb = r · range)")
        ax.set_ylabel("bytes (archive or read)")
        ax.grid(True, which="both", alpha=0.3)
    finish(fig, axes, path, "Bytes needed per bound (circled: bound missed)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DEFAULT_DIR, help="folder for the PNGs")
    p.add_argument("--csv", type=Path, help=f"result CSV (default: OUT/{CSV_NAME})")
    args = p.parse_args(argv)
    by_field = group(read_rows(args.csv or args.out / CSV_NAME))
    args.out.mkdir(parents=True, exist_ok=True)
    plot_rate_distortion(by_field, args.out / "rate_distortion.png")
    plot_bytes_vs_bound(by_field, args.out / "bytes_vs_bound.png")
    print(f"plot_rd: wrote {args.out / 'rate_distortion.png'} and {args.out / 'bytes_vs_bound.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
