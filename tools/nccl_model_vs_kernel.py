#!/usr/bin/env python3
"""tools/nccl_model_vs_kernel.py: NCCL's own cost model and gradsim's run of
NCCL's kernel against the same published measurements.

    python3 tools/nccl_model_vs_kernel.py RESULTS/nccl-tests [experiments/nccl-tests.ini]

RESULTS/nccl-tests is the directory `gradsim reproduce nccl-tests` writes.
For every validation claim of a time or a busbw at one size, it prints the
variant, the buffer (KiB), the algorithm and protocol the tuner chose, and
two ratios to the measured time: the kernel's (the simulated call, as the
claim scores it) and the model's (the same call's NCCL model time, nccl.csv's
model_us). Then, per variant, the range of each. Nothing is fitted here.
"""
import configparser
import csv
import os
import re
import sys


def variants_in_order(runs):
    order = []
    for row in runs:
        if row["variant"] not in order:
            order.append(row["variant"])
    return order


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out = argv[1]
    ini = argv[2] if len(argv) > 2 else "experiments/nccl-tests.ini"
    runs = list(csv.DictReader(open(os.path.join(out, "runs.csv"))))
    # The reproduction writes one sim/N directory per variant, in the
    # order of runs.csv.
    calls = {}
    for i, v in enumerate(variants_in_order(runs)):
        path = os.path.join(out, "sim", str(i), "nccl.csv")
        for x in csv.DictReader(open(path)):
            kib = int(float(x["bytes"])) // 1024
            calls[(v, kib)] = (float(x["model_us"]), float(x["time_us"]),
                               x["algorithm"] + "/" + x["protocol"])
    spec = configparser.ConfigParser(interpolation=None, strict=False)
    spec.read(ini)
    expr = {s[len("reproduce.claim "):]: spec[s].get("value", "")
            for s in spec.sections() if s.startswith("reproduce.claim ")}
    ranges = {}
    print("variant\tkib\tchoice\tkernel\tmodel")
    for c in csv.DictReader(open(os.path.join(out, "claims.csv"))):
        if c["kind"] != "validation":
            continue
        m = re.match(r"(time_us|busbw)\{variant=([^,}]+)(?:, *kib=(\d+))?\}",
                     expr.get(c["claim"], "").strip())
        if not m:
            continue
        what, v, kib = m.group(1), m.group(2), m.group(3)
        if c["group"]:
            kib = int(c["group"])
        elif kib:
            kib = int(kib)
        else:
            sizes = [k for (w, k) in calls if w == v]
            if len(sizes) != 1:
                continue
            kib = sizes[0]
        if (v, kib) not in calls:
            continue
        model_us, time_us, choice = calls[(v, kib)]
        ratio = float(c["ratio"])
        # A time's ratio is gradsim's over the measured, a busbw's the
        # measured time's over gradsim's.
        measured = time_us / ratio if what == "time_us" else time_us * ratio
        k, mo = time_us / measured, model_us / measured
        print(f"{v}\t{kib}\t{choice}\t{k:.3f}\t{mo:.3f}")
        r = ranges.setdefault(v, [9, 0, 9, 0])
        r[0], r[1] = min(r[0], k), max(r[1], k)
        r[2], r[3] = min(r[2], mo), max(r[3], mo)
    print("\nvariant\tkernel\tmodel (time over the measured)")
    for v, r in ranges.items():
        print(f"{v}\t{r[0]:.2f} to {r[1]:.2f}\t{r[2]:.2f} to {r[3]:.2f}")


if __name__ == "__main__":
    main(sys.argv)
