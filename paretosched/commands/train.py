"""`paretosched train CONFIG.yaml`: train an RL scheduler, save its weights, curves and charts.

Writes WEIGHTS (default: CONFIG's name + `.weights.npz`, next to it) and beside it
`<stem>.curves.csv` (one row per episode), `<stem>.curves.json` and `<stem>.training.html` (the
thesis's losses, rewards and action-preferences views), then evaluates the trained agent greedily
on the config's workload window and prints its metrics.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from paretosched.commands.outputs import refuse_existing, require_writable, say_replaced
from paretosched.config import load_config
from paretosched.errors import UserError

_BESIDE = (".curves.csv", ".curves.json", ".training.html")  # written next to the weights, same stem


def run_train(args: Any) -> int:
    from paretosched.sim.rl.training import save_agent, train
    from paretosched.sim.run import prepare, simulate

    cfg = load_config(args.config)
    if cfg.scheduler.kind != "rl":
        raise UserError(f"{args.config}: scheduler.kind is {cfg.scheduler.kind!r}; train needs kind: rl")
    seed = cfg.seed if args.seed is None else args.seed
    out = Path(args.out) if args.out else Path(args.config).with_suffix(".weights.npz")
    stem = out.with_suffix("")
    written = [out, *(Path(f"{stem}{s}") for s in _BESIDE)]
    for path in written:  # before training: its minutes must not end in "cannot write"
        require_writable(path, "--out", folder=False)
        if path.exists() and not path.is_file():
            raise UserError(f"--out {path}: not a regular file")
    replaced = refuse_existing(written, "--out", args.force)
    spec = cfg.scheduler.model_copy(update={"weights": None})
    cfg = cfg.model_copy(update={"scheduler": spec})
    prep = prepare(cfg)
    # the same stream simulate() trains from, so `simulate` with these weights reproduces the run
    ss_sched = np.random.SeedSequence(seed).spawn(2)[1]
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=spec.episodes, unit="episode", desc="training")

    def progress(episode: int, row: dict[str, Any]) -> None:
        if bar is not None:
            bar.set_postfix(loss=f"{row['loss']:.3g}", reward=f"{row['reward']:.3g}",
                            energy_kwh=f"{row['energy_kwh']:.3g}")
            bar.update(1)
        elif (episode + 1) % max(1, spec.episodes // 10) == 0:
            print(f"episode {episode + 1}/{spec.episodes}: loss {row['loss']:.4g}, reward {row['reward']:.4g}")

    try:
        agent, log = train(cfg, prep, ss_sched, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    save_agent(out, cfg, agent)
    rows = log.rows()
    if rows:
        with open(f"{stem}.curves.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    Path(f"{stem}.curves.json").write_text(json.dumps(log.as_dict(), indent=1), encoding="utf-8")
    write_training_html(Path(f"{stem}.training.html"), log.as_dict(), title=str(args.config))
    evaluated = cfg.model_copy(update={"scheduler": spec.model_copy(update={"weights": str(out.resolve())})})
    res = simulate(evaluated, seed=seed, prepared=prep)
    m = res.metrics
    say_replaced(replaced)
    print(f"weights: {out}")
    print(f"curves: {stem}.curves.csv, {stem}.curves.json, {stem}.training.html")
    print(f"greedy evaluation (seed {seed}): energy {m['energy_kwh']:.4f} kWh, mean bounded slowdown "
          f"{m['mean_bsld']:.3f}, makespan {m['makespan_s']:.1f} s, jobs {m['n_jobs']:.0f}")
    return 0


def training_figures(curves: dict[str, Any]) -> list[Any]:
    """Plotly figures of a training log (`TrainingLog.as_dict()`): losses, rewards, action preferences."""
    import plotly.graph_objects as go

    ep = curves["episode"]
    loss = go.Figure(go.Scatter(x=ep, y=curves["loss"], mode="lines", name="loss"))
    loss.update_layout(title="Losses", xaxis_title="episode", yaxis_title="loss")
    reward = go.Figure(go.Scatter(x=ep, y=curves["reward"], mode="lines", name="total reward"))
    reward.update_layout(title="Rewards", xaxis_title="episode", yaxis_title="total reward per episode")
    prefs = go.Figure()
    p = np.array(curves["preferences"]).reshape(len(ep), -1)
    for i, name in enumerate(curves["actions"]):
        prefs.add_trace(go.Scatter(x=ep, y=p[:, i] if len(ep) else [], mode="lines", name=name))
    prefs.update_layout(title="Action preferences", xaxis_title="episode", yaxis_title="mean probability",
                        yaxis_range=[0, 1])
    metrics = go.Figure()
    metrics.add_trace(go.Scatter(x=ep, y=curves["energy_kwh"], mode="lines", name="energy_kwh"))
    metrics.add_trace(go.Scatter(x=ep, y=curves["mean_bsld"], mode="lines", name="mean_bsld", yaxis="y2"))
    metrics.update_layout(title="Episode metrics", xaxis_title="episode", yaxis_title="energy (kWh)",
                          yaxis2={"title": "mean bounded slowdown", "overlaying": "y", "side": "right"})
    return [loss, reward, prefs, metrics]


def write_training_html(path: Path, curves: dict[str, Any], title: str = "") -> Path:
    """The training charts as one page, loading the plotly.min.js it shares with its folder."""
    from paretosched.analysis.plotlyjs import plotly_script

    figs = training_figures(curves)
    parts = [f.to_html(full_html=False, include_plotlyjs=False) for f in figs]
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>training {title}</title>"
            f"{plotly_script(path.parent)}</head>"
            f"<body><h2>Training: {title}</h2>{''.join(parts)}</body></html>")
    path.write_text(html, encoding="utf-8")
    return path
