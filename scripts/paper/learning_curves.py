"""Thesis 5.4 learning curves: train the config on several seeds, summarise, draw the three views.

    python scripts/paper/learning_curves.py studies/paper/thesis-5.4.yaml --seeds 0 1 2 3 4 \
        --out-dir runs/thesis-5.4 --png docs/figures/studies/thesis-5.4-curves.png

Each seed runs `paretosched train CONFIG --seed S --out OUT_DIR/seedS.npz --quiet` (the curves land
in OUT_DIR/seedS.curves.json). Printed per seed (a markdown table):
- rewards: how many episodes got each distinct total reward (6 / 6.6 / 8.4 GFLOP/s in thesis 5.4);
- last_6.0: the last episode rewarded 6.0 (the consolidated low_power outcome; "discarded" after it);
- spread_from: first episode from which the two spreading actions (`*-high_mem_bw`) keep >= 90%
  of the probability until the end;
- diverged_from: first episode from which a single action keeps >= 90% until the end (the thesis's
  "divergence of preferences" between the two optimal actions);
- final: the action with the highest final preference, and that preference;
- loss: |loss| at the last episode and its maximum over the last 50 episodes.
The PNG shows seed `--plot-seed` (default the first): losses, rewards, action preferences.
`--set scheduler.learning_rate=0.0005` (repeatable) trains a copy of the config written to
OUT_DIR/config.yaml with those dotted-path values changed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from common import save_figure


def first_from(mask: np.ndarray) -> int | None:
    """First index from which `mask` is true until the end (None if the last entry is false)."""
    if len(mask) == 0 or not mask[-1]:
        return None
    bad = np.flatnonzero(~mask)
    return int(bad[-1] + 1) if len(bad) else 0


def summarise(curves: dict) -> dict:
    acts = curves["actions"]
    p = np.array(curves["preferences"], dtype=float)
    r = np.round(np.array(curves["reward"], dtype=float), 6)
    loss = np.abs(np.array(curves["loss"], dtype=float))
    spread = [i for i, a in enumerate(acts) if a.endswith("-high_mem_bw")]
    values, counts = np.unique(r, return_counts=True)
    low = np.flatnonzero(np.isclose(r, 6.0))
    k = int(np.argmax(p[-1]))
    return {
        "episodes": len(r),
        "rewards": {float(v): int(c) for v, c in zip(values, counts)},
        "last_6.0": int(low[-1]) if len(low) else None,
        "spread_from": first_from(p[:, spread].sum(axis=1) >= 0.9),
        "diverged_from": first_from(p.max(axis=1) >= 0.9),
        "final": acts[k], "final_pref": float(p[-1, k]),
        "loss_last": float(loss[-1]), "loss_max_last50": float(loss[-50:].max()),
    }


def plot(curves: dict, png: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = np.array(curves["episode"]) + 1
    p = np.array(curves["preferences"], dtype=float)
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.4), dpi=80)
    ax[0].plot(ep, curves["loss"], lw=0.8)
    ax[0].set(title="Losses", xlabel="episode", ylabel="loss")
    ax[1].plot(ep, curves["reward"], ".", ms=2.5)
    ax[1].set(title="Rewards", xlabel="episode", ylabel="reward (used GFLOP/s)", ylim=(5.5, 9))
    for i, a in enumerate(curves["actions"]):
        ax[2].plot(ep, p[:, i], lw=1.2, label=a)
    ax[2].set(title="Action preferences", xlabel="episode", ylabel="mean probability", ylim=(0, 1))
    ax[2].legend(fontsize=7, loc="center right")
    fig.suptitle(title, fontsize=10)
    save_figure(fig, png)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--out-dir", default="runs/thesis-5.4")
    ap.add_argument("--png", default=None)
    ap.add_argument("--plot-seed", type=int, default=None)
    ap.add_argument("--set", action="append", default=[], help="PATH=VALUE, e.g. scheduler.learning_rate=0.0005")
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = args.config
    if args.set:
        import yaml

        from paretosched.config import load_config, set_path

        data = load_config(args.config).model_dump(mode="json", exclude_none=True)
        for item in args.set:
            key, _, value = item.partition("=")
            set_path(data, key, yaml.safe_load(value))
        config = str(out / "config.yaml")
        Path(config).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    exe = Path(sys.executable).with_name("paretosched")
    rows = {}
    for s in args.seeds:
        subprocess.run([str(exe) if exe.exists() else "paretosched", "train", config, "--seed", str(s),
                        "--out", str(out / f"seed{s}.npz"), "--quiet", "--force"],  # a re-run replaces its own
                       check=True, stdout=subprocess.DEVNULL)
        rows[s] = summarise(json.loads((out / f"seed{s}.curves.json").read_text()))
    print("| seed | rewards (value: episodes) | last_6.0 | spread_from | diverged_from | final (pref) | loss last "
          "| max loss last 50 |")
    print("|---:|---|---:|---:|---:|---|---:|---:|")
    for s, r in rows.items():
        rew = ", ".join(f"{v:g}: {c}" for v, c in r["rewards"].items())
        print(f"| {s} | {rew} | {r['last_6.0']} | {r['spread_from']} | {r['diverged_from']} | "
              f"{r['final']} ({r['final_pref']:.3f}) | {r['loss_last']:.2g} | {r['loss_max_last50']:.2g} |")
    if args.png:
        from paretosched.config import load_config

        sp = load_config(config).scheduler
        s = args.seeds[0] if args.plot_seed is None else args.plot_seed
        plot(json.loads((out / f"seed{s}.curves.json").read_text()), Path(args.png),
             f"thesis 5.4 on the twin: {sp.agent} {sp.hidden_layers}x{sp.hidden_units}, lr {sp.learning_rate:g}, "
             f"{sp.episodes} episodes (seed {s})")


if __name__ == "__main__":
    from paretosched.errors import run_script

    raise SystemExit(run_script(main, Path(__file__).name))
