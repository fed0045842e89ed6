"""Markdown summary of a compare_peers.py result CSV.

Works on rows as compare_peers.py makes them or as csv.DictReader reads them
back, so ``python3 report.py RESULTS.csv`` re-prints the summary of a past run.
"""

from __future__ import annotations

import csv
import math
import re
import sys
from collections import defaultdict

CODEC_LABELS = {"sz3": "SZ3", "zfp": "ZFP", "mans": "PRISM"}
VIOLATION = " ✗"


def num(value) -> float | None:
    """A CSV cell as a float; None when empty."""
    if value is None or value == "":
        return None
    return float(value)


def flag(value) -> bool | None:
    """A CSV cell as a bool; None when empty."""
    if value in ("", None):
        return None
    return value is True or str(value).lower() == "true"


def short_name(field: str) -> str:
    """Field name without its trailing dimensions: ``echam5_t_17x96x192`` -> ``echam5_t``."""
    return re.sub(r"_\d+(x\d+)*$", "", field)


def fmt(value: float | None, kind: str = "g") -> str:
    """Readable numbers: ratios and rates to about three significant digits."""
    if value is None:
        return "–"
    if math.isinf(value):
        return "∞"
    if kind == "int":
        return f"{value:,.0f}"
    if kind == "err":  # max error / bound: a hair over 1 must not print as 1.000
        return f"{value:.6f}" if 1 < value < 1.0005 else f"{value:.3f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def index_rows(rows: list[dict]) -> dict:
    """(mode, field, codec, rel_bound or psnr_target) -> row."""
    idx = {}
    for r in rows:
        key_value = r["rel_bound"] if r["mode"] != "progressive_psnr" else r["psnr_target"]
        idx[(r["mode"], r["field"], r["codec"], num(key_value))] = r
    return idx


def fields_and_bounds(rows: list[dict], mode: str, key: str, descending: bool = True) -> list[tuple[str, float]]:
    """Distinct (field, bound) pairs of one mode, in first-seen field order, then by bound."""
    per_field: dict[str, set] = defaultdict(set)
    for r in rows:
        if r["mode"] == mode:
            per_field[r["field"]].add(num(r[key]))
    return [(f, b) for f, bs in per_field.items() for b in sorted(bs, reverse=descending)]


def codecs_present(rows: list[dict]) -> list[str]:
    present = {r["codec"] for r in rows if r["mode"] == "direct"}
    return [c for c in CODEC_LABELS if c in present]


def ratio_cell(row: dict | None) -> str:
    if row is None:
        return "–"
    mark = VIOLATION if flag(row["bound_met"]) is False else ""
    return fmt(num(row["ratio"])) + mark


def speed_cell(row: dict | None) -> str:
    if row is None:
        return "–"
    return f"{fmt(num(row['compress_mbps']))} / {fmt(num(row['decompress_mbps']))}"


def throughput_table(rows: list[dict]) -> str:
    """Ratio and compress / decompress MB/s of each codec side by side."""
    idx, codecs = index_rows(rows), codecs_present(rows)
    header = ["field", "r"] + [f"{CODEC_LABELS[c]} ratio" for c in codecs] \
        + [f"{CODEC_LABELS[c]} MB/s c / d" for c in codecs]
    body = []
    for field, rel in fields_and_bounds(rows, "direct", "rel_bound"):
        cells = [idx.get(("direct", field, c, rel)) for c in codecs]
        body.append([short_name(field), f"{rel:.0e}"] + [ratio_cell(r) for r in cells]
                    + [speed_cell(r) for r in cells])
    return table(header, body)


def accuracy_table(rows: list[dict]) -> str:
    """Bits per value, PSNR and max error / bound of each codec."""
    idx, codecs = index_rows(rows), codecs_present(rows)
    header = ["field", "r"]
    for c in codecs:
        label = CODEC_LABELS[c]
        header += [f"{label} bits/value", f"{label} PSNR dB", f"{label} err/eb"]
    body = []
    for field, rel in fields_and_bounds(rows, "direct", "rel_bound"):
        line = [short_name(field), f"{rel:.0e}"]
        for c in codecs:
            r = idx.get(("direct", field, c, rel))
            if r is None:
                line += ["–"] * 3
                continue
            mark = VIOLATION if flag(r["bound_met"]) is False else ""
            line += [fmt(num(r["bits_per_value"])), fmt(num(r["psnr"])),
                     fmt(num(r["max_err_over_bound"]), "err") + mark]
        body.append(line)
    return table(header, body)


def progressive_table(rows: list[dict]) -> str:
    """Bytes read from one PRISM archive vs each codec's own archive at that bound."""
    idx = index_rows(rows)
    header = ["field", "r", "PRISM progressive read B", "PRISM direct B", "SZ3 B", "ZFP B",
              "prog / SZ3", "prog err/eb"]
    body = []
    for field, rel in fields_and_bounds(rows, "progressive", "rel_bound"):
        prog = idx[("progressive", field, "mans", rel)]
        sizes = [num(r["bytes_read"]) if r else None
                 for r in (idx.get(("direct", field, c, rel)) for c in ("mans", "sz3", "zfp"))]
        read, sz3 = num(prog["bytes_read"]), sizes[1]
        mark = VIOLATION if flag(prog["bound_met"]) is False else ""
        body.append([short_name(field), f"{rel:.0e}", fmt(read, "int")]
                    + [fmt(s, "int") for s in sizes]
                    + [fmt(read / sz3) if sz3 else "–", fmt(num(prog["max_err_over_bound"]), "err") + mark])
    return table(header, body)


def psnr_table(rows: list[dict]) -> str:
    """PSNR targets served from one PRISM archive."""
    idx = index_rows(rows)
    header = ["field", "target dB", "PRISM read B", "bits/value", "achieved dB"]
    body = []
    for field, target in fields_and_bounds(rows, "progressive_psnr", "psnr_target", descending=False):
        r = idx[("progressive_psnr", field, "mans", target)]
        mark = VIOLATION if flag(r["bound_met"]) is False else ""
        body.append([short_name(field), f"{target:g}", fmt(num(r["bytes_read"]), "int"),
                     fmt(num(r["bits_per_value"])), fmt(num(r["psnr"])) + mark])
    return table(header, body)


def violations(rows: list[dict]) -> list[str]:
    """One line per row that missed its bound or PSNR target, or changed fill values."""
    out = []
    for r in rows:
        where = f"{CODEC_LABELS[r['codec']]} {r['mode']} on {short_name(r['field'])}"
        if r["mode"] == "progressive_psnr":
            where += f" at target {num(r['psnr_target']):g} dB"
            problem = f"achieved PSNR {fmt(num(r['psnr']))} dB"
        else:
            where += f" at r={num(r['rel_bound']):.0e}"
            problem = (f"max err / eb = {fmt(num(r['max_err_over_bound']), 'err')}, "
                       f"PSNR {fmt(num(r['psnr']))} dB")
        if flag(r["bound_met"]) is False:
            out.append(f"- {where}: {problem}")
        if flag(r["fill_kept"]) is False:
            out.append(f"- {where}: fill values not kept exactly")
    return out


def markdown_summary(rows: list[dict], preamble: list[str] = ()) -> str:
    """All tables that apply to ``rows``, with a legend."""
    parts = list(preamble)
    parts += ["### Ratio and throughput at the same absolute bound eb = r · range",
              "MB/s = 1e6 bytes of raw input per second, best of the runs; c = compress, d = decompress. "
              f"`{VIOLATION.strip()}` marks a run whose max error exceeded eb.", "",
              throughput_table(rows), "",
              "### Accuracy", "", accuracy_table(rows), ""]
    if any(r["mode"] == "progressive" for r in rows):
        parts += ["### Progressive: one PRISM archive, read up to a coarser bound",
                  "Bytes read from the archive compressed at the finest bound, against each codec's own "
                  "archive compressed directly at that bound.", "", progressive_table(rows), ""]
    if any(r["mode"] == "progressive_psnr" for r in rows):
        parts += ["### Progressive: PSNR targets from the same archive", "", psnr_table(rows), ""]
    missed = violations(rows)
    parts += ["### Bounds missed, fill values changed", ""] + (missed or ["- none"]) + [""]
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: report.py RESULTS.csv", file=sys.stderr)
        return 1
    with open(argv[1], newline="") as f:
        print(markdown_summary(list(csv.DictReader(f))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
