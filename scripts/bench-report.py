#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py KERNEL_TSV OUT_DIR - make bench's records as JSON and a plot.

KERNEL_TSV is what scripts/bench.sh wrote in the guest, one line per
in-kernel case: the name, then "median min max" (ns per pair) of the C core,
the Rust core, the lookups alone and the floor ("-" where not measured),
then the pairs per measurement.  Writes OUT_DIR/bench.json, a list of

    {"name", "c_ns", "rust_ns", "floor_ns", "lookup_ns", "rust_over_c",
     "rust_over_floor", "reps", "min_ns", "max_ns", "c_min_ns", "c_max_ns"}

(floor_ns: lookups + GID entry get/put + the driver's create_ah/destroy_ah;
min_ns/max_ns: the Rust core's) plus the line's own "key=value" fields
(c_p99_ns, live_ahs, c_bytes_per_ah, ...), OUT_DIR/bench.svg: C, Rust and
floor bars per case, and OUT_DIR/bench-scale.svg: the time per AH of each
batch against the live AHs.  Asserts nothing about speed; a malformed line
is an error.
"""

import json
import math
import os
import sys


def num(text):
    return None if text == "-" else int(text)


def records(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 14 or any("=" not in f for f in fields[14:]):
                sys.exit(f"bench-report: malformed line in {path}: {line.strip()!r}")
            name = fields[0]
            c, c_min, c_max, rust, r_min, r_max, lookup, _, _, floor, _, _ = map(
                num, fields[1:13])
            extra = {k: num(v) for k, v in (f.split("=", 1) for f in fields[14:])}
            if (c is None or rust is None) and not extra:
                sys.exit(f"bench-report: {name}: no C or Rust measurement")
            out.append({
                "name": name,
                "c_ns": c,
                "rust_ns": rust,
                "floor_ns": floor,
                "lookup_ns": lookup,
                "rust_over_c": round(rust / c, 4) if c and rust is not None else None,
                "rust_over_floor": round(rust / floor, 4) if floor and rust is not None else None,
                "reps": int(fields[13]),
                "min_ns": r_min,
                "max_ns": r_max,
                "c_min_ns": c_min,
                "c_max_ns": c_max,
                **extra,
            })
    if not out:
        sys.exit(f"bench-report: no records in {path}")
    return out


def bars_svg(recs):
    """Grouped horizontal bars, one group per case, on a logarithmic scale."""
    recs = [r for r in recs if r["name"].startswith(("kernel_ah_", "xrcd_", "first_ah_"))]
    bars = [("c_ns", "C core", "#c0504d"), ("rust_ns", "Rust core", "#4f81bd"),
            ("floor_ns", "floor", "#9bbb59")]
    values = [r[k] for r in recs for k, _, _ in bars if r[k]]
    lo, hi = min(values) / 2, max(values) * 2
    span = math.log10(hi) - math.log10(lo)
    left, width, bar_h, gap = 230, 520, 12, 14
    height = 60 + len(recs) * (len(bars) * bar_h + gap)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 120}" '
        f'height="{height}" font-family="sans-serif" font-size="11">',
        '<text x="10" y="18" font-size="13">rverbs in the kernel: ns per create+destroy '
        '(first AH: per create), log scale, medians</text>',
    ]
    for i, (_, label, colour) in enumerate(bars):
        x = left + i * 110
        parts.append(f'<rect x="{x}" y="26" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14}" y="35">{label}</text>')
    y = 50
    for r in recs:
        parts.append(f'<text x="10" y="{y + bar_h * 2}">{r["name"]}</text>')
        for key, _, colour in bars:
            v = r[key]
            if v:
                w = max(1, (math.log10(v) - math.log10(lo)) / span * width)
                parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                             f'fill="{colour}"/>')
                parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar_h - 3}">{v}</text>')
            y += bar_h
        y += gap
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def scale_svg(recs):
    """Time per AH of each batch against the live AHs, C and Rust."""
    pts = [r for r in recs if "live_ahs" in r and r["c_ns"] and r["rust_ns"]]
    if not pts:
        return None
    left, top, width, height = 70, 40, 520, 260
    xmax = max(r["live_ahs"] for r in pts)
    ymin = min(min(r["c_ns"], r["rust_ns"]) for r in pts) / 2
    ymax = max(max(r["c_ns"], r["rust_ns"]) for r in pts) * 2
    span = math.log10(ymax / ymin)

    def y(v):
        return top + height - math.log10(v / ymin) / span * height

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" '
        f'height="{top + height + 50}" font-family="sans-serif" font-size="11">',
        '<text x="10" y="18" font-size="13">rverbs: ns per AH created, batch by batch, '
        'against live AHs on rv0 (log scale)</text>',
        f'<line x1="{left}" y1="{top + height}" x2="{left + width}" y2="{top + height}" '
        'stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + height}" stroke="black"/>',
        f'<text x="{left + width / 2 - 30}" y="{top + height + 35}">live AHs</text>',
        f'<text x="{left + width - 40}" y="{top + height + 15}">{xmax}</text>',
        f'<text x="5" y="{top + 10}">{int(ymax)} ns</text>',
        f'<text x="5" y="{top + height}">{int(ymin)} ns</text>',
    ]
    for key, colour in (("c_ns", "#c0504d"), ("rust_ns", "#4f81bd")):
        xy = " ".join(f"{left + r['live_ahs'] / xmax * width:.1f},{y(r[key]):.1f}"
                      for r in pts)
        parts.append(f'<polyline points="{xy}" fill="none" stroke="{colour}" stroke-width="2"/>')
    parts.append(f'<text x="{left + 10}" y="{top + 12}" fill="#c0504d">C core</text>')
    parts.append(f'<text x="{left + 70}" y="{top + 12}" fill="#4f81bd">Rust core</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-report.py KERNEL_TSV OUT_DIR")
    recs = records(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    with open(os.path.join(sys.argv[2], "bench.json"), "w", encoding="utf-8") as f:
        json.dump(recs, f, indent=1)
        f.write("\n")
    with open(os.path.join(sys.argv[2], "bench.svg"), "w", encoding="utf-8") as f:
        f.write(bars_svg(recs))
    scale = scale_svg(recs)
    if scale:
        with open(os.path.join(sys.argv[2], "bench-scale.svg"), "w", encoding="utf-8") as f:
            f.write(scale)
    print(f"bench: {len(recs)} records in {sys.argv[2]}/bench.json, plot {sys.argv[2]}/bench.svg")


if __name__ == "__main__":
    main()
