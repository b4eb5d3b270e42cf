"""same_bests.py A.json B.json: two campaigns' --json outputs (one line per unit, then the closing
line) tuned the same units, and each unit's best in B is within 5 % of its best in A. Exit 1 with
the unit and both bests when not (gpu.009 and gpu.018: GPUs side by side must not change bests)."""
import json
import sys

one, two = ([json.loads(l) for l in open(f) if l.strip()] for f in sys.argv[1:3])
key = lambda u: (u["shape"], u["causal"])
# side by side the units report in the order they end
two_by = {key(u): u for u in two[:-1]}
if sorted(two_by) != sorted(map(key, one[:-1])):
    sys.exit(f"different units: {sorted(two_by)} against {[key(u) for u in one[:-1]]}")
for a in one[:-1]:
    b = two_by[key(a)]
    r = b["best"]["t_median_us"] / a["best"]["t_median_us"]
    if not 0.95 <= r <= 1.05:
        sys.exit(f"{a['shape']} causal {a['causal']}: best {b['best']} against {a['best']} ({r:.3f}x)")
