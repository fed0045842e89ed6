"""Runs the mans CLI's lossy (PRISM) mode and reads its JSON summaries.

Commands used (absolute error bounds):

    mans compress   -t f32 --dims 17x96x192 --error-bound EB -i IN -o ARCH --json
    mans decompress -i ARCH -o OUT --json                     (full)
    mans decompress -i ARCH -o OUT --error-bound EB --json    (progressive, coarser bound)
    mans decompress -i ARCH -o OUT --psnr P --json            (progressive, PSNR target)

Compress prints at least "compressed_bytes", "raw_bytes", "seconds";
decompress at least "seconds", "bytes_read". Timing uses "seconds" when the
JSON has it, else the subprocess's wall time (the result says which).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from fields import Field


class MansError(RuntimeError):
    """The mans CLI failed, or lacks the lossy options this harness needs."""


def fmt_bound(value: float) -> str:
    """A float as the CLI gets it: shortest text that round-trips exactly."""
    return repr(float(value))


def compress_cmd(mans: Path, fld: Field, abs_bound: float, archive: Path, threads: int | None) -> list[str]:
    cmd = [str(mans), "compress", "-t", fld.dtype, "--dims", fld.dims_text,
           "--error-bound", fmt_bound(abs_bound), "-i", str(fld.path), "-o", str(archive), "--json"]
    return cmd + threads_opt(threads)


def decompress_cmd(mans: Path, archive: Path, out: Path, threads: int | None,
                   abs_bound: float | None = None, psnr: float | None = None) -> list[str]:
    cmd = [str(mans), "decompress", "-i", str(archive), "-o", str(out)]
    if abs_bound is not None:
        cmd += ["--error-bound", fmt_bound(abs_bound)]
    if psnr is not None:
        cmd += ["--psnr", fmt_bound(psnr)]
    return cmd + ["--json"] + threads_opt(threads)


def threads_opt(threads: int | None) -> list[str]:
    return [] if threads is None else ["--threads", str(threads)]


@dataclass
class CliRun:
    """One CLI invocation: its JSON summary and the seconds to report."""

    summary: dict
    seconds: float
    timing: str              # "json" or "wall"


def run_json(cmd: list[str]) -> CliRun:
    """Run ``cmd``; fail with its stderr if it exits non-zero; parse its JSON."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise MansError(f"`{shlex.join(cmd)}` exited {proc.returncode}: {proc.stderr.strip()}")
    summary = parse_json(proc.stdout, cmd)
    if isinstance(summary.get("seconds"), (int, float)):
        return CliRun(summary, float(summary["seconds"]), "json")
    return CliRun(summary, wall, "wall")


def parse_json(stdout: str, cmd: list[str]) -> dict:
    """The JSON object on stdout: the whole text, else its last line that is one."""
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.lstrip().startswith("{")]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise MansError(f"`{shlex.join(cmd)}` printed no JSON object on stdout: {text[:200]!r}")


def best_run(cmd: list[str], reps: int) -> CliRun:
    """Run ``cmd`` ``reps`` times; keep the fastest."""
    runs = [run_json(cmd) for _ in range(reps)]
    return min(runs, key=lambda r: r.seconds)


def help_text(mans: Path, sub: str) -> str:
    proc = subprocess.run([str(mans), sub, "--help"], capture_output=True, text=True)
    return proc.stdout + proc.stderr


def check_lossy_support(mans: Path) -> dict[str, bool]:
    """Fail clearly unless ``mans compress`` takes --error-bound; report decompress options.

    Returns {"progressive": decompress takes --error-bound, "psnr": decompress takes --psnr}.
    """
    if not mans.is_file():
        raise MansError(f"no mans binary at {mans} (build it, pass --mans PATH, or use --peers-only)")
    compress_help = help_text(mans, "compress")
    if "--error-bound" not in compress_help:
        raise MansError(
            f"{mans} has no lossy mode: 'mans compress --help' lists no --error-bound option. "
            "Build a mans with PRISM support, or run with --peers-only.")
    decompress_help = help_text(mans, "decompress")
    return {"progressive": "--error-bound" in decompress_help, "psnr": "--psnr" in decompress_help}
