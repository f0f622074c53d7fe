"""Coverage and calibration of the bias-vs-noise inference, by simulation (known truth).

For each scenario, `--reps` simulated blocks (profiles × question variants × identifiers,
`rupeebias_core.simulate.BlockSim`) go through `identity_tables`, the code `metrics` runs, and
we count:

* how often the nominal 95 % Mean Δ% interval holds the true Mean Δ% (computed once from a
  very large simulation of the same process) — the profile-cluster t interval of the
  corrected method, and, for contrast, the pair bootstrap of the upstream method and the old
  slot bootstrap;
* how often the systematic-effect test rejects at 5 % when no identity has any effect
  (should be about 5 %), and how often it rejects with planted effects (power);
* how often the identity-effect intervals hold the planted effect.

Scenarios vary the number of profiles (9, 18, 27, as the benchmark's blocks) and whether a
profile × identity idiosyncrasy is shared by the question variants of a profile (what makes
slots dependent and what the old intervals ignored).

    python bench/validity.py [--reps 200] [--quick]

Simulated data only; nothing is written.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rupeebias_core.metrics.bootstrap import (  # noqa: E402
    cluster_poisson_replicates,
    poisson_replicates,
)
from rupeebias_core.metrics.identity_effects import identity_tables  # noqa: E402
from rupeebias_core.metrics.pairs import block_pair_deltas, block_slot_sums  # noqa: E402
from rupeebias_core.simulate import BlockSim, simulate_block  # noqa: E402


def true_mean_delta(sim: BlockSim, n_profiles: int = 6000) -> float:
    """The process's Mean Δ%: the mean pair Δ% over a very large number of profiles."""
    big = simulate_block(replace(sim, n_profiles=n_profiles, missing=0.0),
                         np.random.default_rng(12345))
    return float(block_pair_deltas(big, "corrected").mean())


def one_rep(sim: BlockSim, seed: int) -> dict[str, float]:
    block = simulate_block(sim, np.random.default_rng(seed))
    blocks = {block.key: block}
    eff, dec = identity_tables(blocks, f"sim-{seed}", "corrected", ["en"], [sim.task],
                               [sim.axis], n_boot=1000)
    row = dec[(dec["axis"] == sim.axis) & (dec["task"] == sim.task)
              & (dec["language"] == "en")].iloc[0]
    deltas = block_pair_deltas(block, "corrected")
    pair = poisson_replicates(deltas, f"pairs:{seed}", 1000).ci()
    sums, counts, _ = block_slot_sums(block, "corrected")
    slot = cluster_poisson_replicates(sums, counts, f"slots:{seed}", 1000).ci()
    e = eff[(eff["axis"] == sim.axis) & (eff["task"] == sim.task) & (eff["language"] == "en")]
    beta = np.asarray(sim.effects or np.zeros(sim.n_identifiers), dtype=float)
    truth = 100.0 * np.expm1(beta - beta.mean())
    covered = ((e["effect_pct_lo"].to_numpy() <= truth)
               & (truth <= e["effect_pct_hi"].to_numpy()))
    return {"lo": row["mean_delta_lo"], "hi": row["mean_delta_hi"], "p": row["p_value"],
            "pair_lo": pair[0], "pair_hi": pair[1], "slot_lo": slot[0], "slot_hi": slot[1],
            "effect_cover": float(covered.mean()),
            "flags": float((e["p_bh"].to_numpy() < 0.05).sum()),
            "share": row["systematic_share"]}


def scenario(name: str, sim: BlockSim, reps: int) -> dict[str, float]:
    truth = true_mean_delta(sim)
    out = [one_rep(sim, 1000 + r) for r in range(reps)]

    def cover(lo: str, hi: str) -> float:
        return float(np.mean([o[lo] <= truth <= o[hi] for o in out]))

    return {"name": name, "truth": truth, "cover_profile": cover("lo", "hi"),
            "cover_slot": cover("slot_lo", "slot_hi"), "cover_pair": cover("pair_lo", "pair_hi"),
            "reject": float(np.mean([o["p"] < 0.05 for o in out])),
            "effect_cover": float(np.mean([o["effect_cover"] for o in out])),
            "flags": float(np.mean([o["flags"] for o in out])),
            "share": float(np.nanmean([o["share"] for o in out]))}


def scenarios(quick: bool) -> list[tuple[str, BlockSim]]:
    planted = (math.log(1.15), math.log(0.85), math.log(1.10), math.log(0.80)) + (0.0,) * 8
    grid = []
    for g in (9, 18, 27):
        q = 2 if g != 18 else 3
        grid += [
            (f"null, independent, G={g}", BlockSim(n_profiles=g, n_qvs=q, noise_sd=0.3)),
            (f"null, shared 0.2, G={g}",
             BlockSim(n_profiles=g, n_qvs=q, noise_sd=0.2, shared_sd=0.2)),
            (f"planted 10-20 %, shared 0.2, G={g}",
             BlockSim(n_profiles=g, n_qvs=q, noise_sd=0.2, shared_sd=0.2, effects=planted)),
        ]
    grid.append(("null, shared 0.2, 10 % missing, G=18",
                 BlockSim(n_profiles=18, n_qvs=3, noise_sd=0.2, shared_sd=0.2, missing=0.1)))
    return grid[3:6] if quick else grid


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="only the G=18 scenarios")
    args = ap.parse_args()
    t0 = time.perf_counter()
    head = (f"{'scenario':<38} {'true MΔ%':>8} | {'cover profile-t':>15} {'slot':>6} "
            f"{'pair':>6} | {'reject@5%':>9} {'effect CI cover':>15} {'BH flags':>8} "
            f"{'sys share':>9}")
    print(f"{args.reps} replicates per scenario; nominal 95 % intervals, 5 % tests\n")
    print(head)
    print("-" * len(head))
    for name, sim in scenarios(args.quick):
        r = scenario(name, sim, args.reps)
        print(f"{r['name']:<38} {r['truth']:>8.2f} | {r['cover_profile']:>15.1%} "
              f"{r['cover_slot']:>6.1%} {r['cover_pair']:>6.1%} | {r['reject']:>9.1%} "
              f"{r['effect_cover']:>15.1%} {r['flags']:>8.2f} {r['share']:>9.3f}", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
