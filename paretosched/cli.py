"""The `paretosched` command: parses arguments and delegates to the layers.

Each subcommand imports its layer lazily, so `paretosched simulate` never loads pandas, plotly,
pymoo or scikit-learn. A user mistake (`UserError`) prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, NoReturn, Sequence

from paretosched import __version__
from paretosched.errors import UserError


def _seed_list(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    twice = next((s for i, s in enumerate(seeds) if s in seeds[:i]), None)
    if twice is not None:  # a repeat is one run counted twice (the study's rule, search.study.Seeds)
        raise argparse.ArgumentTypeError(f"seed {twice} is listed twice (expected distinct seeds), got {text!r}")
    return seeds


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return seed


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake on one line (as every other error) instead of the usage text."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive(kind: type) -> Any:
    """An argparse type: a finite number > 0 of `kind` (int or float)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__} > 0, got {text!r}") from None
        if not 0 < value < float("inf"):  # also refuses nan
            raise argparse.ArgumentTypeError(f"expected a finite {kind.__name__} > 0, got {text!r}")
        return value
    return parse


def _workers(text: str) -> int:
    from paretosched.search.guards import MAX_WORKERS

    n = _positive(int)(text)
    if n > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"at most {MAX_WORKERS} workers, got {text!r}")
    return n


DESCRIPTION = """Find the best trade-offs between the energy an HPC cluster burns and the slowdown
its users suffer, by searching its scheduler's parameters on a digital twin."""
EPILOG = """a first session:
  paretosched optimise studies/quickstart.yaml        # search; writes the run directory runs/quickstart/
  paretosched explore runs/quickstart --open          # the front in a browser: click a point for its config
  paretosched export runs/quickstart --pick balanced -o best.yaml
  paretosched simulate best.yaml                      # replays it on the twin

An output you name to simulate, platform import, trace import, train, analyse, explore, export or
runs table (--out, -o, --output, --plots, --scheduler) is never replaced without that command's
--force. optimise takes no --force: its --out run directory is continued with --resume, or refused.
The views written inside a run directory by default (RUN/analysis/, RUN/explorer.html) are
regenerated each time. `paretosched COMMAND --help` shows each command with an example."""


def _sub(sub: Any, name: str, help: str, example: str, **kw: Any) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with a worked example."""
    return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                          epilog="example:\n  " + example.replace("\n", "\n  "),
                          formatter_class=argparse.RawDescriptionHelpFormatter, **kw)


def _force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="replace output files that already exist")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="paretosched", description=DESCRIPTION, epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"paretosched {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = _sub(sub, "simulate", "run one scheduler config on the twin and print its metrics",
               "paretosched simulate studies/configs/fcfs-easy.yaml --n-jobs 200 --seeds 1,2,3\n"
               "paretosched simulate best.yaml --timeline --out out/ --plots plots/")
    sim.add_argument("config", help="scheduler config YAML (platform, workload, model, scheduler)")
    sim.add_argument("--platform", help="override the platform (built-in name, homogeneous-N or file)")
    sim.add_argument("--workload", help="override the workload trace path (or builtin:NAME)")
    sim.add_argument("--first-job", type=int, help="override workload.first_job")
    sim.add_argument("--n-jobs", type=int, help="override workload.n_jobs")
    sim.add_argument("--seed", type=_seed, help="run seed (replaces the config's seed)")
    sim.add_argument("--seeds", type=_seed_list,
                     help="comma-separated seeds; metrics are their mean (default: provenance seeds of an export)")
    sim.add_argument("--json", action="store_true", help="print one JSON object of metrics")
    sim.add_argument("--out", metavar="DIR", help="folder to write jobs.csv and metrics.json into (created if needed)")
    sim.add_argument("--timeline", action="store_true",
                     help="record power, cores per state, queue and bandwidth over-use (written with --out)")
    sim.add_argument("--plots", metavar="DIR",
                     help="folder to write run.html into: Gantt, utilisation, power, lifecycle, P-state charts")
    _force(sim)

    plat = _sub(sub, "platform", "inspect built-in platforms and import one from slurm.conf",
                "paretosched platform show gaia")
    plat_sub = plat.add_subparsers(dest="platform_command", required=True, metavar="ACTION")
    show = _sub(plat_sub, "show", "print nodes, processors, cores, peak GFLOP/s, power",
                "paretosched platform show gaia --json")
    show.add_argument("platform", help="built-in name, homogeneous-N, or a platform file")
    show.add_argument("--json", action="store_true")
    _sub(plat_sub, "list", "list the built-in platforms", "paretosched platform list")
    imp = _sub(plat_sub, "import", "write a platform file from slurm.conf NodeName lines",
               "paretosched platform import slurm.conf --cpu-map cpus.yaml -o platform.yaml --scheduler sched.yaml")
    imp.add_argument("conf", nargs="+", help="slurm.conf (and fragments read after it, later ones override)")
    imp.add_argument("--cpu-map", help="YAML mapping Feature tags / node-name patterns to processor models")
    imp.add_argument("--name", help="platform name (default: ClusterName, else the file's stem)")
    imp.add_argument("-o", "--output", required=True, metavar="FILE", help="platform YAML file to write")
    imp.add_argument("--scheduler", metavar="FILE", help="also write the slurm-kind scheduler section it configures")
    _force(imp)

    trace = _sub(sub, "trace", "convert workload traces", "paretosched trace import sacct.txt -o jobs.swf.gz")
    trace_sub = trace.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    timp = _sub(trace_sub, "import", "convert an sacct -P dump to SWF",
                "paretosched trace import sacct.txt -o jobs.swf.gz   # how to dump sacct.txt: docs/slurm.md")
    timp.add_argument("dump", help="sacct --parsable2 output with a header line")
    timp.add_argument("-o", "--output", required=True, metavar="FILE", help="SWF file to write (.gz compresses)")
    timp.add_argument("--slurm-conf", metavar="FILE", nargs="+",
                      help="number partitions (SWF field 16) as this slurm.conf lists them, as `platform import "
                           "--scheduler` does (default: in order of first appearance)")
    _force(timp)

    tr = _sub(sub, "train", "train an RL scheduler config; save weights, curves and charts",
              "paretosched train studies/configs/rl-reinforce.yaml --out agent.weights.npz")
    tr.add_argument("config", help="scheduler config YAML with scheduler.kind: rl")
    tr.add_argument("--out", metavar="FILE",
                    help="weights file to write (default: CONFIG with .weights.npz); the curves and "
                         "training.html are written beside it with the same stem")
    tr.add_argument("--seed", type=_seed, help="run seed (replaces the config's seed)")
    tr.add_argument("--quiet", action="store_true", help="log lines instead of a progress bar")
    _force(tr)

    opt = _sub(sub, "optimise", "run NSGA-II over a study's genome",
               "paretosched optimise studies/quickstart.yaml --out runs/qs --workers 2\n"
               "paretosched optimise runs/qs --resume", aliases=["optimize"])
    opt.add_argument("study", help="study YAML (or a run directory with --resume)")
    opt.add_argument("--out", metavar="RUN_DIR", help="run directory to create (default runs/<study name>)")
    opt.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    opt.add_argument("--workers", type=_workers, help="parallel evaluation workers (default: the study's)")
    opt.add_argument("--dask", metavar="ADDRESS", help="evaluate on a Dask distributed scheduler")
    opt.add_argument("--local", action="store_true",
                     help="evaluate on this machine even if the study or the resumed run says dask")
    opt.add_argument("--quiet", action="store_true", help="log lines instead of a progress bar")

    ana = _sub(sub, "analyse", "front, picks, DBSCAN clusters, Lasso drivers, report.html",
               "paretosched analyse runs/quickstart            # writes runs/quickstart/analysis/report.html",
               aliases=["analyze"])
    ana.add_argument("run", help="run directory")
    ana.add_argument("--out", metavar="DIR",
                     help="folder for the tables and report.html (default RUN/analysis, regenerated each time)")
    ana.add_argument("--on", choices=["near", "front", "population"], default="near",
                     help="what DBSCAN clusters and Lasso fits (near: evaluations near the front)")
    ana.add_argument("--layers", type=_positive(int),
                     help="--on near: non-dominated layers to take (default: enough for 40 points)")
    ana.add_argument("--eps", type=_positive(float), help="DBSCAN eps (default: from the k-distance curve)")
    ana.add_argument("--min-samples", type=_positive(int), help="DBSCAN min_samples")
    _force(ana)

    exp = _sub(sub, "explore", "write the interactive explorer.html for a run",
               "paretosched explore runs/quickstart --open\n"
               "paretosched explore runs/quickstart --standalone --out quickstart.html   # one file to send")
    exp.add_argument("run", help="run directory")
    exp.add_argument("--out", metavar="FILE",
                     help="HTML file to write, or a folder to write explorer.html into (default RUN/explorer.html, "
                          "regenerated each time)")
    exp.add_argument("--standalone", action="store_true",
                     help="embed plotly.js (megabytes) in the page instead of sharing plotly.min.js beside it, "
                          "so the page alone can be mailed or attached")
    exp.add_argument("--open", action="store_true", help="open it in a browser")
    _force(exp)

    ex = _sub(sub, "export", "write the scheduler config of a front point",
              "paretosched export runs/quickstart --pick balanced -o best.yaml\n"
              "paretosched export runs/slurm-quickstart --pick knee --format slurm -o paretosched.conf\n"
              "paretosched export runs/slurm-quickstart --pick minimal:90 --format slurm --against slurm.conf "
              "-o slurm.conf.diff")
    ex.add_argument("run", help="run directory")
    ex.add_argument("--pick", default="balanced",
                    help="balanced | knee | min:METRIC | weights:a,b | index:N (front position) | eval:ID | "
                         "baseline:NAME | minimal:P (fewest changed parameters keeping P%% of the best "
                         "re-checked energy saving) (default: balanced)")
    ex.add_argument("-o", "--output", default=None, metavar="FILE",
                    help="config file to write (default: best.yaml, or best.conf with --format slurm, "
                         "slurm.conf.diff with --against, in the current folder)")
    ex.add_argument("--format", choices=["yaml", "slurm"], default="yaml",
                    help="yaml: the config simulate reads; slurm: a slurm.conf fragment (docs/slurm.md)")
    ex.add_argument("--against", metavar="SLURM_CONF",
                    help="with --format slurm: write the smallest edit of this slurm.conf as a unified diff "
                         "(patch SLURM_CONF < FILE), each change tagged with how it takes effect")
    ex.add_argument("--cpu-map", help="with --against: the cpu map `platform import` needs for that slurm.conf")
    _force(ex)

    runs = _sub(sub, "runs", "read run directories (tables for pandas, R, spreadsheets)",
                "paretosched runs table runs/quickstart -o evals.csv")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True, metavar="ACTION")
    table = _sub(runs_sub, "table", "one row per logged evaluation: genes, objectives, metrics, seeds",
                 "paretosched runs table runs/quickstart -o evals.parquet")
    table.add_argument("run", help="run directory")
    table.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="table file to write: .csv or .parquet (the parquet extra)")
    table.add_argument("--per-seed", action="store_true", help="one row per evaluation and seed instead")
    _force(table)
    return ap


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt so a killed run stops the way Ctrl-C stops it.

    That matters for `optimise`: an interrupt that reaches joblib while it waits for results makes
    it terminate its worker processes, where a plain SIGTERM left them simulating as orphans.
    """


def _on_sigterm(signum: int, frame: Any) -> NoReturn:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not break the clean-up
    raise _Terminated()


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command (`argv`, default sys.argv[1:]); its exit code. `own_process`: this call is
    the whole process (the console script, `python -m`), so what the imports make may be frozen."""
    return _command(argv, own_process)[0]


def _command(argv: Sequence[str] | None, own_process: bool) -> tuple[int, bool]:
    """`main`'s exit code, and whether the process may end at once (`outputs.end_process`)."""
    args = build_parser().parse_args(argv)
    args.own_process = own_process
    args.exit_now = False
    return _guarded(args), args.exit_now


def _guarded(args: argparse.Namespace) -> int:
    installed = False
    # only where SIGTERM has its default action (not ignored or handled by an embedding program),
    # and only from the main thread, where Python can install handlers
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
        installed = True
    try:
        return _dispatch(args)
    except UserError as exc:
        print(f"paretosched: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, _Terminated)
        resume = getattr(exc, "resume_command", None)  # optimise: the command that continues the run
        print(f"paretosched: {'terminated' if terminated else 'interrupted'}"
              + (f"; resume with: {resume}" if resume else ""), file=sys.stderr)
        return 143 if terminated else 130
    except BrokenPipeError:
        # output piped into `head` and closed early: not an error of ours
        sys.stderr.close()
        return 0
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def _imports(own_process: bool) -> Iterator[None]:
    """A command's imports. In a process of its own, what they make lives as long as the process:
    the collector is paused while they load and their objects are frozen after, so its later passes
    (and its pass at exit) skip them (50 ms of a 0.8 s `simulate` of 10,000 jobs). Called in-process
    (tests, notebooks), nothing changes: freezing would keep the caller's garbage cycles forever."""
    if not own_process:
        yield
        return
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_on:
            gc.enable()


def _dispatch(args: argparse.Namespace) -> int:
    from paretosched.commands.outputs import STDOUT, output_errors, refuse_existing, require_writable, say_replaced

    cmd = args.command
    if cmd == "simulate":
        with _imports(args.own_process):
            from paretosched.commands.simulate import run_simulate

        with output_errors("--out" if args.out else STDOUT):  # --json or the table
            code = run_simulate(args)
            if sys.stdout is not None:  # (None when started with stdout closed)
                sys.stdout.flush()  # a full device or a closed pipe is found here, not at exit
        # nothing of the package is left to run at exit; --plots' libraries might leave something
        args.exit_now = args.own_process and not args.plots
        return code
    if cmd == "platform" and args.platform_command == "import":
        from paretosched.commands.slurm_io import run_platform_import

        with output_errors("--output"):
            return run_platform_import(args)
    if cmd == "trace":
        from paretosched.commands.slurm_io import run_trace_import

        with output_errors("--output"):
            return run_trace_import(args)
    if cmd == "platform":
        from paretosched.commands.platform import run_platform

        return run_platform(args)
    if cmd == "train":
        from paretosched.commands.train import run_train

        with output_errors("--out"):
            return run_train(args)
    if cmd in ("optimise", "optimize"):
        from paretosched.commands.optimise import run_optimise

        with output_errors("--out", again="continue with --resume (nothing logged is lost)"):
            return run_optimise(args)
    if cmd in ("analyse", "analyze"):
        from paretosched.analysis.report import REPORT_FILES, analyse

        replaced: list[Path] = []
        if args.out is not None:  # a folder the user names; RUN/analysis is the run's own view
            require_writable(args.out, "--out", folder=True)
            replaced = refuse_existing([Path(args.out) / f for f in REPORT_FILES], "--out", args.force)
        with output_errors("--out"):
            folder = analyse(args.run, out=args.out, on=args.on, eps=args.eps, min_samples=args.min_samples,
                             layers=args.layers)
        say_replaced(replaced)
        print(f"report: {Path(folder) / 'report.html'}")
        return 0
    if cmd == "explore":
        from paretosched.analysis.explorer import explorer_file, write_explorer

        replaced = []
        if args.out is not None:  # a file the user names; RUN/explorer.html is the run's own view
            require_writable(args.out, "--out", folder=None)  # a folder gets explorer.html
            replaced = refuse_existing([explorer_file(args.out)], "--out", args.force)
        with output_errors("--out"):
            path = write_explorer(args.run, out=args.out, standalone=args.standalone)
        say_replaced(replaced)
        print(f"explorer: {path}")
        if args.open:
            import webbrowser

            webbrowser.open(Path(path).resolve().as_uri())
        return 0
    if cmd == "export":
        from paretosched.analysis.export import pick_point, write_diff, write_point

        if (args.against or args.cpu_map) and args.format != "slurm":
            raise UserError("--against and --cpu-map need --format slurm")
        if args.cpu_map and not args.against:
            raise UserError("--cpu-map is for --against (the fragment needs no cpu map)")
        if args.against:
            output = args.output or "slurm.conf.diff"
            require_writable(output, "--output", folder=None)
            run, chosen = pick_point(args.run, args.pick)
            replaced = refuse_existing([output], "--output", args.force)
            with output_errors("--output"):
                path, changes = write_diff(run, chosen, output, args.against, args.cpu_map)
            say_replaced(replaced)
            for c in changes:
                print(f"  {c.line()}", file=sys.stderr)
            print(f"diff: {path} (pick {args.pick}: eval {chosen.eval_id}; {len(changes)} change(s) to "
                  f"{args.against}; apply with: patch {args.against} < {path})")
            return 0
        output = args.output or ("best.conf" if args.format == "slurm" else "best.yaml")
        require_writable(output, "--output", folder=None)  # a folder gets a named file
        run, chosen = pick_point(args.run, args.pick)  # a bad pick is reported as such, before the file check
        replaced = refuse_existing([output], "--output", args.force)
        with output_errors("--output"):
            path = write_point(run, chosen, output, fmt=args.format)
        say_replaced(replaced)
        print(f"config: {path} (pick {args.pick}: eval {chosen.eval_id})")
        return 0
    if cmd == "runs":
        from paretosched.commands.runs import run_runs

        require_writable(args.output, "--output", folder=False)
        replaced = refuse_existing([args.output], "--output", args.force)
        with output_errors("--output"):
            rc = run_runs(args)
        say_replaced(replaced)
        return rc
    raise UserError(f"unknown command {cmd!r}")  # argparse rejects these first


def run() -> NoReturn:
    """The console script and `python -m paretosched.cli`: the command is the whole process."""
    code, exit_now = _command(None, own_process=True)
    if exit_now and threading.active_count() == 1:
        from paretosched.commands.outputs import end_process

        end_process(code)  # (returns only when the output cannot be flushed)
    sys.exit(code)


if __name__ == "__main__":
    run()
