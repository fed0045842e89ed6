#!/usr/bin/env python3
"""Compare the mans lossy codec PRISM with SZ3 and ZFP on the real sample fields.

For every field and relative bound r, the absolute bound is eb = r * (max - min)
over the field's finite, non-fill values, and every codec gets that same eb:
SZ3 in ABS mode, ZFP in fixed-accuracy mode, PRISM through the mans CLI. Errors
are measured here, from each codec's output, over the non-fill values only; the
codecs themselves get the raw array, fill values included.

PRISM is also measured progressively: one archive per field compressed at the
finest bound (--archive-bound), then read back up to each coarser bound and to
PSNR targets; the bytes read are compared with each codec's own archive.

Writes RESULTS.csv and summary.md into --out and prints the Markdown summary.
Progress goes to stderr.

    compare_peers.py [--mans build/cli/mans] [--out DIR] [--peers-only] [--dry-run]
"""

from __future__ import annotations

import argparse
import csv
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import mans_cli
import report
from fields import DEFAULT_DATA_DIR, REPO_ROOT, Field, error_metrics, load_fields
from peers import PEERS, run_peer

DEFAULT_BOUNDS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
DEFAULT_PSNR_TARGETS = (40.0, 60.0, 80.0, 100.0)
CSV_NAME = "prism_vs_peers.csv"

COLUMNS = [
    "field", "dtype", "dims", "count", "raw_bytes", "fill_fraction", "value_range",
    "codec", "mode", "rel_bound", "abs_bound", "psnr_target",
    "archive_bytes", "bytes_read", "ratio", "bits_per_value",
    "compress_mbps", "decompress_mbps", "timing",
    "max_abs_error", "max_err_over_bound", "psnr", "bound_met", "fill_kept",
    "tool_max_abs_error_bound", "notes",
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def mbps(fld: Field, seconds: float | None) -> float | str:
    """Raw input megabytes (1e6 bytes) per second."""
    return fld.raw_bytes / 1e6 / seconds if seconds else ""


def new_row(fld: Field, codec: str, mode: str, archive_bytes: int, bytes_read: int, **extra) -> dict:
    """A CSV row with the field's columns and the size-derived ones filled in."""
    row = dict.fromkeys(COLUMNS, "")
    row.update(field=fld.name, dtype=fld.dtype, dims=fld.dims_text, count=fld.count,
               raw_bytes=fld.raw_bytes, fill_fraction=fld.fill_fraction, value_range=fld.value_range,
               codec=codec, mode=mode, archive_bytes=archive_bytes, bytes_read=bytes_read,
               ratio=fld.raw_bytes / bytes_read, bits_per_value=8 * bytes_read / fld.count)
    row.update(extra)
    return row


# ---------------------------------------------------------------- peers

def peer_rows(fld: Field, bounds: list[float], reps: int) -> list[dict]:
    """SZ3 and ZFP at every bound."""
    rows = []
    for rel in bounds:
        eb = rel * fld.value_range
        for peer in PEERS:
            run = run_peer(peer, fld.data, eb, reps)
            rows.append(new_row(
                fld, peer.name, "direct", run.compressed_bytes, run.compressed_bytes,
                rel_bound=rel, abs_bound=eb, compress_mbps=mbps(fld, run.compress_seconds),
                decompress_mbps=mbps(fld, run.decompress_seconds), timing="in-process",
                **error_metrics(fld, run.recon, eb)))
            log(f"  {peer.name:4} r={rel:.0e}: ratio {rows[-1]['ratio']:8.2f}, "
                f"err/eb {rows[-1]['max_err_over_bound']:.3f}")
    return rows


# ---------------------------------------------------------------- mans (PRISM)

class MansBench:
    """Runs the PRISM measurements of one field through the mans CLI."""

    def __init__(self, mans: Path, workdir: Path, reps: int, threads: int | None):
        self.mans, self.workdir, self.reps, self.threads = mans, workdir, reps, threads

    def archive_path(self, fld: Field, rel: float) -> Path:
        return self.workdir / f"{fld.name}.r{rel:.0e}.mans"

    def output_path(self, fld: Field) -> Path:
        return self.workdir / f"{fld.name}.out.{fld.dtype}"

    def read_output(self, fld: Field) -> np.ndarray:
        out = self.output_path(fld)
        recon = np.fromfile(out, dtype=fld.data.dtype)
        if recon.size != fld.count:
            raise mans_cli.MansError(f"{out}: {recon.size} values, expected {fld.count}")
        return recon

    def compress(self, fld: Field, rel: float) -> tuple[Path, mans_cli.CliRun]:
        archive = self.archive_path(fld, rel)
        cmd = mans_cli.compress_cmd(self.mans, fld, rel * fld.value_range, archive, self.threads)
        return archive, mans_cli.best_run(cmd, self.reps)

    def decompress(self, fld: Field, archive: Path, **target) -> tuple[mans_cli.CliRun, np.ndarray]:
        cmd = mans_cli.decompress_cmd(self.mans, archive, self.output_path(fld), self.threads, **target)
        run = mans_cli.best_run(cmd, self.reps)
        return run, self.read_output(fld)

    def direct_row(self, fld: Field, rel: float) -> dict:
        """Compress at ``rel``, decompress in full, measure."""
        eb = rel * fld.value_range
        archive, comp = self.compress(fld, rel)
        size = archive.stat().st_size
        notes = []
        if comp.summary.get("compressed_bytes") not in (None, size):
            notes.append(f"JSON compressed_bytes {comp.summary['compressed_bytes']} != file size {size}")
        dec, recon = self.decompress(fld, archive)
        if dec.summary.get("bytes_read") not in (None, size):
            notes.append(f"full decompress read {dec.summary['bytes_read']} of {size} bytes")
        return new_row(
            fld, "mans", "direct", size, size, rel_bound=rel, abs_bound=eb,
            compress_mbps=mbps(fld, comp.seconds), decompress_mbps=mbps(fld, dec.seconds),
            timing=f"{comp.timing}/{dec.timing}",
            tool_max_abs_error_bound=tool_bound(comp, dec), notes="; ".join(notes),
            **error_metrics(fld, recon, eb))

    def progressive_row(self, fld: Field, archive: Path, rel: float) -> dict:
        """Read ``archive`` up to the coarser bound ``rel``."""
        eb = rel * fld.value_range
        dec, recon = self.decompress(fld, archive, abs_bound=eb)
        return new_row(
            fld, "mans", "progressive", archive.stat().st_size, bytes_read(dec),
            rel_bound=rel, abs_bound=eb, decompress_mbps=mbps(fld, dec.seconds), timing=dec.timing,
            tool_max_abs_error_bound=tool_bound(dec), **error_metrics(fld, recon, eb))

    def psnr_row(self, fld: Field, archive: Path, target: float) -> dict:
        """Read ``archive`` up to a PSNR target; bound_met = achieved PSNR >= target."""
        dec, recon = self.decompress(fld, archive, psnr=target)
        metrics = error_metrics(fld, recon, None)
        metrics["bound_met"] = metrics["psnr"] >= target
        return new_row(
            fld, "mans", "progressive_psnr", archive.stat().st_size, bytes_read(dec),
            psnr_target=target, decompress_mbps=mbps(fld, dec.seconds), timing=dec.timing,
            tool_max_abs_error_bound=tool_bound(dec), **metrics)


def bytes_read(run: mans_cli.CliRun) -> int:
    if not isinstance(run.summary.get("bytes_read"), int):
        raise mans_cli.MansError(f"decompress JSON has no integer 'bytes_read': {run.summary}")
    return run.summary["bytes_read"]


def tool_bound(*runs: mans_cli.CliRun):
    """The tool's own "max_abs_error_bound", from the last run that reports one."""
    values = [r.summary["max_abs_error_bound"] for r in runs if "max_abs_error_bound" in r.summary]
    return values[-1] if values else ""


def mans_rows(bench: MansBench, fld: Field, args, caps: dict) -> list[dict]:
    """Direct runs at every bound, then the progressive reads of the finest archive."""
    rows = []
    for rel in args.bounds:
        rows.append(bench.direct_row(fld, rel))
        log(f"  mans r={rel:.0e}: ratio {rows[-1]['ratio']:8.2f}, err/eb {rows[-1]['max_err_over_bound']:.3f}")
    archive = bench.archive_path(fld, args.archive_bound)
    if args.archive_bound not in args.bounds:
        bench.compress(fld, args.archive_bound)
    if caps["progressive"]:
        rows += [bench.progressive_row(fld, archive, rel) for rel in args.bounds if rel >= args.archive_bound]
    if caps["psnr"]:
        rows += [bench.psnr_row(fld, archive, p) for p in args.psnr_targets]
    return rows


def print_dry_run(fields: list[Field], args) -> None:
    """Print every mans command the real run would execute (once each, not per repetition)."""
    try:
        caps = mans_cli.check_lossy_support(args.mans)
        print(f"# {args.mans}: lossy compress present; decompress --error-bound "
              f"{'present' if caps['progressive'] else 'MISSING'}, --psnr {'present' if caps['psnr'] else 'MISSING'}")
    except mans_cli.MansError as e:
        print(f"# not runnable yet: {e}")
    work = Path("$WORK")
    bench = MansBench(args.mans, work, 1, args.mans_threads)
    for fld in fields:
        print(f"# {fld.name}: range {fld.value_range:.9g}, fill {fld.fill_fraction:.1%}")
        out = bench.output_path(fld)
        for rel in sorted(set(args.bounds) | {args.archive_bound}, reverse=True):
            eb = rel * fld.value_range
            archive = bench.archive_path(fld, rel)
            print(shlex.join(mans_cli.compress_cmd(args.mans, fld, eb, archive, args.mans_threads)))
            if rel in args.bounds:
                print(shlex.join(mans_cli.decompress_cmd(args.mans, archive, out, args.mans_threads)))
        archive = bench.archive_path(fld, args.archive_bound)
        for rel in args.bounds:
            if rel >= args.archive_bound:
                print(shlex.join(mans_cli.decompress_cmd(
                    args.mans, archive, out, args.mans_threads, abs_bound=rel * fld.value_range)))
        for p in args.psnr_targets:
            print(shlex.join(mans_cli.decompress_cmd(args.mans, archive, out, args.mans_threads, psnr=p)))


# ---------------------------------------------------------------- output

def write_csv(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def preamble(args, fields: list[Field]) -> list[str]:
    """Bullet lines that say what was run where."""
    from peers import Sz3, Zfp

    filled = [f"{f.name}: {f.fill_fraction:.1%} fill {f.fill:g}" for f in fields if f.fill is not None]
    lines = [f"- machine: {cpu_model()}, Python {platform.python_version()}, numpy {np.__version__}",
             f"- peers: {Sz3.version()} (SZ3, ABS mode), {Zfp.version()} (ZFP fixed-accuracy), "
             "both single-threaded, timed in-process",
             f"- best of {args.reps} run(s); bounds r = {', '.join(f'{r:.0e}' for r in args.bounds)}",
             "- range, errors and PSNR over finite non-fill values only; every codec gets the raw array"
             + (f" ({'; '.join(filled)})" if filled else "")]
    if not args.peers_only:
        threads = "all threads" if args.mans_threads == 0 else f"--threads {args.mans_threads}"
        lines.append(f"- PRISM: `{args.mans}` ({threads}); timings from its JSON `seconds` "
                     "when present, else subprocess wall time (column `timing`)")
    return lines + [""]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mans", type=Path, default=REPO_ROOT / "build" / "cli" / "mans", help="mans CLI binary")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR, help="folder of the raw sample fields")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results",
                   help="folder for the CSV and summary.md")
    p.add_argument("--fields", nargs="+", metavar="WORD", help="only fields whose file name contains a WORD")
    p.add_argument("--bounds", nargs="+", type=float, default=list(DEFAULT_BOUNDS), help="relative bounds r")
    p.add_argument("--archive-bound", type=float, default=1e-6, help="r of the progressive archive")
    p.add_argument("--psnr-targets", nargs="*", type=float, default=list(DEFAULT_PSNR_TARGETS))
    p.add_argument("--reps", type=int, default=3, help="runs per timing, best kept")
    p.add_argument("--mans-threads", type=int, default=1,
                   help="--threads for the mans CLI (0 = all; default 1, like the peers)")
    p.add_argument("--peers-only", action="store_true", help="measure SZ3 and ZFP only")
    p.add_argument("--dry-run", action="store_true", help="print the mans commands and exit")
    args = p.parse_args(argv)
    args.mans = args.mans.resolve()
    args.bounds = sorted(args.bounds, reverse=True)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    fields = load_fields(args.data, args.fields)
    if args.dry_run:
        print_dry_run(fields, args)
        return 0
    caps = {}
    if not args.peers_only:
        try:
            caps = mans_cli.check_lossy_support(args.mans)
        except mans_cli.MansError as e:
            log(f"compare_peers: {e}")
            return 2
        for cap, option in (("progressive", "--error-bound"), ("psnr", "--psnr")):
            if not caps[cap]:
                log(f"compare_peers: warning: 'mans decompress' has no {option}; skipping those reads")
    rows, status = [], 0
    with tempfile.TemporaryDirectory(prefix="prism-bench-") as tmp:
        bench = MansBench(args.mans, Path(tmp), args.reps, args.mans_threads)
        for fld in fields:
            log(f"{fld.name}: {fld.count} values, range {fld.value_range:.6g}, fill {fld.fill_fraction:.1%}")
            start = time.perf_counter()
            rows += peer_rows(fld, args.bounds, args.reps)
            if not args.peers_only:
                try:
                    rows += mans_rows(bench, fld, args, caps)
                except mans_cli.MansError as e:
                    log(f"compare_peers: {e}\ncompare_peers: stopping; writing the rows measured so far")
                    status = 2
                    break
            log(f"  ({time.perf_counter() - start:.2f} s)")
    write_outputs(rows, args, fields)
    return status


def write_outputs(rows: list[dict], args, fields: list[Field]) -> None:
    """The CSV and summary.md into --out; the summary also to stdout."""
    write_csv(rows, args.out / CSV_NAME)
    summary = report.markdown_summary(rows, preamble(args, fields))
    (args.out / "summary.md").write_text(summary)
    print(summary)
    log(f"compare_peers: wrote {args.out / CSV_NAME} and {args.out / 'summary.md'}")


if __name__ == "__main__":
    sys.exit(main())
