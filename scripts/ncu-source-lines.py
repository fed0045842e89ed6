#!/usr/bin/env python3
"""ncu-source-lines.py CSV [N] - the N source lines (default 40) with the
most warp-state samples in Nsight Compute's source page
(`ncu --import R --page source --csv --print-source cuda,sass`), used by
scripts/device-profile.sh on the lent GPU machine.

The page's layout differs between ncu releases, so this reads it loosely:
the header row is the first with a "Warp Stall Sampling" column; a row's
key is its file and line when the page gives them (a "File"/"Line"
column, or a row naming a file before its lines), else its source text.
Samples of one key are summed (a CUDA line has many SASS instructions).
What it could not read it says, with the header it saw, so that the next
run can be fixed from the output alone.
"""
import csv
import sys
from collections import defaultdict


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(f))
    header, start = None, 0
    for i, row in enumerate(rows):
        if any(cell.startswith("Warp Stall Sampling") for cell in row):
            header, start = row, i + 1
            break
    if header is None:
        print(f"no 'Warp Stall Sampling' column in {len(rows)} rows; first rows:")
        for row in rows[:5]:
            print("  " + " | ".join(row)[:300])
        return 1

    def column(*names):
        for name in names:
            for j, cell in enumerate(header):
                if cell.strip().lower() == name.lower():
                    return j
        return None

    stall = [j for j, cell in enumerate(header) if cell.startswith("Warp Stall Sampling")]
    samples = ([j for j in stall if header[j].startswith("Warp Stall Sampling (All")] or stall)[0]
    source = column("Source", "Source Code")
    file_col = column("File", "Source File")
    line_col = column("Line", "#", "Line Number")
    totals = defaultdict(float)
    current_file = ""
    for row in rows[start:]:
        if len(row) <= samples:
            # A row naming the file whose lines follow.
            text = " ".join(row).strip()
            if text:
                current_file = text.split("File:")[-1].strip() if "File:" in text else text
            continue
        value = number(row[samples])
        if value is None:
            continue
        where = row[file_col] if file_col is not None else current_file
        if line_col is not None and row[line_col].strip():
            key = f"{where}:{row[line_col].strip()}"
            if source is not None:
                key += "  " + row[source].strip()[:90]
        else:
            key = (row[source].strip() if source is not None else "|".join(row))[:120]
            if where:
                key = f"{where.rsplit('/', 1)[-1]}: {key}"
        totals[key] += value
    total = sum(totals.values())
    if total <= 0:
        print(f"no samples; header: {' | '.join(header)[:300]}")
        return 1
    print(f"{total:.0f} samples in {len(totals)} lines; the {min(top, len(totals))} with the most:")
    for key, value in sorted(totals.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{100 * value / total:6.2f}% {value:10.0f}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
