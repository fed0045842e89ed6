#!/usr/bin/env python3
"""ptx-local-memory.py PTX ENTRY_SUBSTRING [N] - where a kernel touches local
memory, read from PTX without a GPU: for the first .entry whose name
contains ENTRY_SUBSTRING and every .func it calls (transitively), the local
depot's size and the ld.local / st.local instructions per source line
(from -lineinfo's .loc directives), those inside a loop (between a label
and a later branch back to it) listed first, N lines (default 25).

PTX comes from
  nvcc -arch=sm_90 -std=c++17 -O2 -ptx -lineinfo -fmad=false --extended-lambda \\
       -DMANS_GPU_ENCODE=1 -DMANS_GPU_NAME='"cuda"' -DMANS_GPU_TARGETS='"sm_90"' \\
       -Ibackends/gpu -Ilibcompress/src -Ilibcompress/include -Ibuild/libcompress/include \\
       backends/gpu/gpu_module.cu -o /tmp/m.ptx
ptxas may inline the functions and remove some accesses, so the counts are
what the compiler front end asked for, not a profile: a line's count says
nothing of how often it runs (a loop count is static too). ptxas's
`-Xptxas -v` gives the final stack frame; an Nsight Compute profile
(scripts/device-profile.sh) says what the accesses cost.
"""
import re
import sys
from collections import Counter

FUNC = re.compile(r"^(?:\.visible |\.weak )*\.(?:func|entry)\s+(?:\([^)]*\)\s*)?(\w+)", re.M)
CALL = re.compile(r"call(?:\.uni)?\s*(?:\([^)]*\),)?\s*(\w+)")
LOC = re.compile(r"\s*\.loc\s+(\d+)\s+(\d+)")
LABEL = re.compile(r"^(\$\w+):")
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$\w+);")


def functions(ptx):
    """Name -> body of every function definition (a prototype has no body)."""
    out = {}
    for m in FUNC.finditer(ptx):
        end = ptx.find("\n}\n", m.start())
        head_end = ptx.find("\n{", m.start())
        if head_end != -1 and head_end < end and ptx.rfind(";", m.start(), head_end) == -1:
            out[m.group(1)] = ptx[m.start():end]
    return out


def local_accesses(body, files):
    """[(file:line, 'ld'|'st', in_loop)] in body order."""
    lines = body.split("\n")
    label_at = {}
    for i, line in enumerate(lines):
        m = LABEL.match(line)
        if m:
            label_at[m.group(1)] = i
    loops = []  # (first, last) line ranges closed by a backward branch
    for i, line in enumerate(lines):
        m = BRANCH.search(line)
        if m and m.group(1) in label_at and label_at[m.group(1)] <= i:
            loops.append((label_at[m.group(1)], i))
    out, where = [], "?"
    for i, line in enumerate(lines):
        m = LOC.match(line)
        if m:
            where = "%s:%s" % (files.get(m.group(1), "?").split("/")[-1], m.group(2))
            continue
        kind = "ld" if "ld.local" in line else "st" if "st.local" in line else None
        if kind:
            out.append((where, kind, any(a <= i <= b for a, b in loops)))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ptx = open(sys.argv[1], errors="replace").read()
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    files = {m.group(1): m.group(2) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M)}
    funcs = functions(ptx)
    entries = [n for n in funcs if sys.argv[2] in n and ".entry " + n in ptx]
    if not entries:
        sys.exit("no .entry containing %r in %s" % (sys.argv[2], sys.argv[1]))
    todo, seen = [entries[0]], {entries[0]}
    total_depot, per_line = 0, Counter()
    print("entry", entries[0])
    while todo:
        name = todo.pop()
        body = funcs[name]
        depot = sum(int(d) for d in re.findall(r"__local_depot\d+\[(\d+)\]", body))
        acc = local_accesses(body, files)
        total_depot += depot
        for where, kind, in_loop in acc:
            per_line[(where, kind, in_loop)] += 1
        print("  depot %5d B  local ops %4d (in loops %4d)  %s" % (
            depot, len(acc), sum(1 for a in acc if a[2]), name[:110]))
        for callee in CALL.findall(body):
            if callee in funcs and callee not in seen:
                seen.add(callee)
                todo.append(callee)
    print("depots of the entry and its callees: %d bytes" % total_depot)
    print("local ops by source line (static counts), inside loops first:")
    ranked = sorted(per_line.items(), key=lambda kv: (not kv[0][2], -kv[1]))
    for (where, kind, in_loop), n in ranked[:top]:
        print("  %4d %s %-32s %s" % (n, kind, where, "loop" if in_loop else ""))


if __name__ == "__main__":
    main()
