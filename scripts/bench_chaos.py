"""Chaos soaks: a study run while its processes are killed, against the same study undisturbed.

**Dask.** A scheduler and two workers started with the ``dask`` command on 127.0.0.1, as a
cluster manager starts them (``dask scheduler``; ``dask worker ADDRESS --nthreads 1``: a
nanny and its worker process). Every ``--kill-every`` seconds (between 0.5 and 1.5 times
that, from a seeded generator) one worker's process group is killed with SIGKILL, as a
preempted machine is lost, and a new worker started; once, when 40 % of the task files are
written, the driver (``kbench run``) is killed with SIGKILL and the same command run again.

**Local.** The driver's process group (the driver and its task processes) is killed with
SIGKILL once, at 40 % of the task files, and the command run again; and a task process is
killed with SIGKILL every ``--kill-every`` seconds: kbench records those tasks as crashed,
and the same command with ``--retry-failed`` runs them again at the end.

Each soak is compared with the same study run undisturbed on the same executor (its data
streams built beforehand, and a fresh cluster for each Dask run): the ``runs``,
``outcomes`` and ``traces`` tables must be equal, timing, memory and timestamps left out,
with every task present once. Printed: kills, tasks run again, results computed again,
wall time against the undisturbed run, whether the tables are equal, lines of Dask's own
log on kbench's output, and (Dask) the most finished results the workers held at once and
the peak resident memory of the driver, the scheduler and the workers (sampled every 0.2 s).

Run: ``.venv/bin/python scripts/bench_chaos.py --tasks 600 --kill-every 15``;
``--no-chaos --executor dask --tasks 10000`` measures only the undisturbed run's memory.
``--json FILE`` writes the figures (``tests/test_chaos.py`` reads them).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

KBENCH = [sys.executable, "-m", "kbench.cli.main"]
DASK = [str(Path(sys.executable).with_name("dask"))]  # the command a cluster manager runs
#: Columns that differ between two runs of the same study: timing, memory and timestamps.
UNSTABLE = {"time_s", "us_per_example", "peak_memory", "started_at", "finished_at", "machine"}
#: A line of Dask's own log (its format: time - logger - level - message), or a traceback.
DASK_LOG = re.compile(r" - (distributed|tornado|asyncio)[.\w]* - [A-Z]+ - |^Traceback|Warning: ")
#: Share of the task files written when the driver is killed.
DRIVER_KILL_AT = 0.4


def study(tasks: int) -> list[str]:
    """``kbench run`` arguments of a study of ``tasks`` short tasks (a multiple of 20): the
    kernel perceptron with ``tasks / 20`` RBF widths on 200 examples of a9a and of digits,
    ten seeds each."""
    if tasks % 20 or tasks <= 0:
        raise SystemExit(f"--tasks {tasks}: give a positive multiple of 20")
    args = ["-a", "perceptron"]
    for i in range(tasks // 20):
        args += ["-k", f"rbf[gamma={0.01 + 0.0001 * i:.4f}]"]
    return [*args, "-d", "a9a[n=200]", "-d", "digits[positive=5-9,n=200]", "--seeds", "0-9"]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """In a child: a session of its own (killed as a group) that dies with this script."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Processes:
    """The processes this script starts, each the leader of its own process group; every
    group still running is killed with SIGKILL on :meth:`close` (and so on any exit)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: list[subprocess.Popen[bytes]] = []
        self.seen: set[int] = set()  # every pid below them, for the check that none is left

    def start(self, args: list[str], log: str, env: dict[str, str] | None = None) -> Any:
        with open(self.folder / log, "ab") as fh:
            proc = subprocess.Popen(
                args,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=_die_with_parent,
            )
        self.started.append(proc)
        return proc

    def start_kbench(self, args: list[str], name: str) -> Any:
        """``kbench ARGS``, its standard output and error in NAME.out and NAME.err."""
        out = open(self.folder / f"{name}.out", "wb")  # noqa: SIM115 - closed with the process
        err = open(self.folder / f"{name}.err", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [*KBENCH, *args],
            stdout=out,
            stderr=err,
            env=dict(os.environ, COLUMNS="200"),
            preexec_fn=_die_with_parent,
        )
        out.close()
        err.close()
        self.started.append(proc)
        return proc

    def note_descendants(self) -> None:
        import psutil

        for proc in self.started:
            with contextlib.suppress(psutil.Error):
                self.seen.update(p.pid for p in psutil.Process(proc.pid).children(recursive=True))

    @staticmethod
    def kill_group(proc: Any) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)

    def close(self) -> None:
        for proc in self.started:
            self.kill_group(proc)

    def left_running(self, grace: float = 10.0) -> list[int]:
        """Processes started here (or seen below them) still running after ``grace`` s."""
        import psutil

        pids = {p.pid for p in self.started} | self.seen
        deadline = time.monotonic() + grace
        while True:
            alive = []
            for pid in pids:
                with contextlib.suppress(psutil.Error):
                    if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                        alive.append(pid)
            if not alive or time.monotonic() > deadline:
                return sorted(alive)
            time.sleep(0.1)


class DaskCluster:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, started as a cluster
    manager starts them."""

    def __init__(self, procs: Processes, name: str) -> None:
        self.procs = procs
        self.name = name
        self.workers: list[Any] = []
        self.started_workers = 0
        file = procs.folder / f"{name}-scheduler.json"
        file.unlink(missing_ok=True)  # an earlier cluster's, whose address is dead
        self.scheduler = procs.start(
            [*DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(file)],
            f"{name}-scheduler.log",
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not file.exists() or not file.read_text().strip():
            if self.scheduler.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the scheduler did not start: see {name}-scheduler.log")
            time.sleep(0.05)
        time.sleep(0.05)  # written whole by now
        self.address = json.loads(file.read_text())["address"]

    def add_worker(self) -> None:
        self.started_workers += 1
        args = [*DASK, "worker", self.address, "--nthreads", "1", "--no-dashboard"]
        args += ["--name", f"{self.name}-w{self.started_workers}"]
        self.workers.append(self.procs.start(args, f"{self.name}-workers.log"))

    def kill_worker(self, rng: random.Random) -> None:
        """A worker lost as a preempted machine: its nanny and worker process, SIGKILL."""
        self.procs.note_descendants()
        victim = self.workers.pop(rng.randrange(len(self.workers)))
        self.procs.kill_group(victim)


class Watch:
    """A client of its own on the scheduler: the scheduler's events of lost workers (tasks
    rescheduled, finished results computed again) and, every 0.2 s, the study's finished
    results held on the workers and the resident memory of the driver, the scheduler and
    the workers."""

    def __init__(self, cluster: DaskCluster, total: int, tasks_dir: Path) -> None:
        from dask.distributed import Client

        self.cluster = cluster
        self.client = Client(cluster.address, timeout="30s")
        self.client.subscribe_topic("all", self._event)
        self.total, self.tasks_dir = total, tasks_dir
        self.driver: Any = None
        self.rescheduled = 0
        self.recomputed = 0
        self.max_held = 0
        self.rss: dict[str, int] = {"driver_tasks": 0, "driver": 0, "scheduler": 0, "worker": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _event(self, event: tuple[float, Any]) -> None:
        msg = event[1]
        if isinstance(msg, dict) and msg.get("action") == "remove-worker":
            ours = [k for k in msg.get("processing-tasks", ()) if str(k).startswith("kbench-")]
            lost = [k for k in msg.get("lost-computed-tasks", ()) if str(k).startswith("kbench-")]
            self.rescheduled += len(ours)
            self.recomputed += len(lost)

    def _sample(self) -> None:
        import psutil

        def rss(pid: int) -> int:
            with contextlib.suppress(psutil.Error):
                return psutil.Process(pid).memory_info().rss
            return 0

        while not self._stop.wait(0.2):
            with contextlib.suppress(Exception):
                held = self.client.has_what()
                n = sum(1 for keys in held.values() for k in keys if str(k).startswith("kbench-"))
                self.max_held = max(self.max_held, n)
            self.rss["scheduler"] = max(self.rss["scheduler"], rss(self.cluster.scheduler.pid))
            for nanny in list(self.cluster.workers):
                with contextlib.suppress(psutil.Error):
                    for worker in psutil.Process(nanny.pid).children():
                        self.rss["worker"] = max(self.rss["worker"], rss(worker.pid))
            driver = self.driver
            if driver is not None and driver.poll() is None:
                now = rss(driver.pid)
                self.rss["driver"] = max(self.rss["driver"], now)
                if _count_files(self.tasks_dir) < self.total:
                    self.rss["driver_tasks"] = max(self.rss["driver_tasks"], now)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        with contextlib.suppress(Exception):
            self.client.close(timeout=10)


def _count_files(tasks_dir: Path) -> int:
    try:
        return sum(
            1 for name in os.listdir(tasks_dir) if name.endswith(".parquet") and name[0] != "."
        )
    except OSError:
        return 0


class Soak:
    """What one run (undisturbed or under kills) did.

    (A plain class: a dataclass needs its module imported by name, which a script that
    the tests load from its file is not.)
    """

    def __init__(self, executor: str, chaos: bool, tasks: int, out: str) -> None:
        self.executor, self.chaos, self.tasks, self.out = executor, chaos, tasks, out
        self.wall = 0.0
        self.runs = 0  # kbench run commands it took
        self.worker_kills = self.driver_kills = self.task_kills = 0
        self.rescheduled = 0  # tasks running (or assigned) on a lost worker, run again
        self.recomputed = 0  # finished results lost with a worker, computed again
        self.retried = 0  # crashed tasks run again by --retry-failed
        self.max_held = 0
        self.rss: dict[str, int] = {}
        self.dask_log_lines: list[str] = []
        self.kbench_lines: list[str] = []
        self.failure = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    """The three summary tables, timing, memory and timestamps left out, in task order."""
    runs = pd.read_parquet(out / "runs.parquet")
    traces = pd.read_parquet(out / "traces.parquet")
    outcomes = pd.read_parquet(out / "outcomes.parquet")
    keep = {
        "runs": (runs, ["task_id"]),
        "traces": (traces, ["task_id", "epoch", "seen"]),
        "outcomes": (outcomes, ["task_id", "example"]),
    }
    return {
        name: frame.drop(columns=[c for c in frame.columns if c in UNSTABLE])
        .sort_values(order)
        .reset_index(drop=True)
        for name, (frame, order) in keep.items()
    }


def compare(out: Path, reference: Path, tasks: int) -> str:
    """'' when the tables of ``out`` equal those of ``reference`` and hold every task once;
    otherwise what differs."""
    try:
        a, b = _tables(out), _tables(reference)
    except Exception as exc:
        return f"tables unreadable: {type(exc).__name__}: {exc}"
    ids = a["runs"]["task_id"]
    if len(ids) != tasks or ids.duplicated().any():
        return f"{len(ids)} rows for {ids.nunique()} tasks, {tasks} planned"
    problems = []
    for name in a:
        try:
            pd.testing.assert_frame_equal(a[name], b[name], check_exact=True)
        except AssertionError as exc:
            problems.append(f"{name}: {' '.join(str(exc).split())[:300]}")
    return "; ".join(problems)


class Soaker:
    """Runs the soaks of one study in ``folder``, every process killed at the end."""

    def __init__(self, folder: Path, tasks: int, kill_every: float, seed: int, deadline: float):
        self.folder, self.tasks, self.kill_every = folder, tasks, kill_every
        self.rng = random.Random(seed)
        self.deadline = deadline  # seconds allowed to each soak
        self.procs = Processes(folder)
        self.args = study(tasks)

    def warm(self) -> None:
        """Build the study's streams into the cache (one task per stream): the measured runs
        only read them."""
        args = ["run", *self.args[:4], *self.args[-6:], "--workers", "2", "--no-report"]
        proc = self.procs.start_kbench([*args, "--out", str(self.folder / "warm")], "warm")
        if proc.wait(timeout=600) != 0:
            raise RuntimeError((self.folder / "warm.err").read_text()[-2000:])

    def _command(self, executor: str, out: Path, cluster: DaskCluster | None) -> list[str]:
        args = ["run", *self.args, "--no-report", "--out", str(out)]
        if cluster is not None:
            return [*args, "--executor", "dask", "--scheduler", cluster.address]
        return [*args, "--workers", "2"]

    def _next_kill(self) -> float:
        return time.monotonic() + self.kill_every * self.rng.uniform(0.5, 1.5)

    def run(self, executor: str, chaos: bool) -> Soak:
        name = f"{executor}-{'chaos' if chaos else 'undisturbed'}"
        out = self.folder / name
        soak = Soak(executor, chaos, self.tasks, str(out))
        cluster = watch = None
        try:
            if executor == "dask":
                cluster = DaskCluster(self.procs, name)
                for _ in range(2):
                    cluster.add_worker()
                watch = Watch(cluster, self.tasks, out / "tasks")
                watch.client.wait_for_workers(2, timeout=180)
            command = self._command(executor, out, cluster)
            self._drive(soak, name, command, cluster, watch)
        except Exception as exc:  # reported, and the processes killed below
            soak.failure = soak.failure or f"{type(exc).__name__}: {exc}"
        finally:
            if watch is not None:
                watch.close()
                soak.rescheduled, soak.recomputed = watch.rescheduled, watch.recomputed
                soak.max_held, soak.rss = watch.max_held, dict(watch.rss)
            self.procs.note_descendants()
            self.procs.close()
        for i in range(soak.runs):
            for part in ("err", "out"):
                path = self.folder / f"{name}-{i}.{part}"
                if path.exists():
                    text = path.read_text(errors="replace").splitlines()
                    soak.dask_log_lines += [ln for ln in text if DASK_LOG.search(ln)]
                    soak.kbench_lines += [ln for ln in text if ln.startswith("kbench: ")]
        return soak

    def _drive(
        self,
        soak: Soak,
        name: str,
        command: list[str],
        cluster: DaskCluster | None,
        watch: Watch | None,
    ) -> None:
        tasks_dir = Path(soak.out) / "tasks"
        started = time.monotonic()
        end = started + self.deadline
        driver = self.procs.start_kbench(command, f"{name}-{soak.runs}")
        soak.runs += 1
        if watch is not None:
            watch.driver = driver
        next_kill = self._next_kill()
        while True:
            code = driver.poll()
            if code is not None:
                if code != 0:
                    soak.failure = f"kbench run exited with {code}: see {name}-{soak.runs - 1}.err"
                    return
                break
            now = time.monotonic()
            if now > end:
                soak.failure = f"not finished after {self.deadline:.0f} s"
                return
            written = _count_files(tasks_dir)
            if soak.chaos and not soak.driver_kills and written >= DRIVER_KILL_AT * self.tasks:
                self.procs.note_descendants()
                self.procs.kill_group(driver)  # the driver's group: its task processes too
                soak.driver_kills += 1
                driver = self.procs.start_kbench(command, f"{name}-{soak.runs}")
                soak.runs += 1
                if watch is not None:
                    watch.driver = driver
                continue
            if soak.chaos and now > next_kill:
                if cluster is not None:
                    cluster.kill_worker(self.rng)
                    cluster.add_worker()
                    soak.worker_kills += 1
                    next_kill = self._next_kill()
                elif self._kill_a_task(driver):
                    soak.task_kills += 1
                    next_kill = self._next_kill()
                # No task process alive at this moment (between two tasks, or the driver
                # starting again): the kill is due still, and tried again at the next poll.
            time.sleep(0.02)
        if cluster is None and soak.chaos:
            soak.retried = self._failed_count(Path(soak.out))
            if soak.retried:
                again = self.procs.start_kbench([*command, "--retry-failed"], f"{name}-{soak.runs}")
                soak.runs += 1
                if again.wait(timeout=max(1.0, end - time.monotonic())) != 0:
                    soak.failure = "kbench run --retry-failed failed"
                    return
        soak.wall = time.monotonic() - started

    def _kill_a_task(self, driver: Any) -> int:
        """SIGKILL one task process of the local executor (a child of the driver)."""
        import psutil

        with contextlib.suppress(psutil.Error):
            children = [
                p for p in psutil.Process(driver.pid).children()
                if p.status() != psutil.STATUS_ZOMBIE
            ]  # fmt: skip
            if children:
                victim = self.rng.choice(children)
                self.procs.seen.add(victim.pid)
                victim.kill()
                return 1
        return 0

    @staticmethod
    def _failed_count(out: Path) -> int:
        runs = pd.read_parquet(out / "runs.parquet", columns=["status"])
        return int((runs["status"] != "ok").sum())


def soak(
    folder: Path,
    *,
    tasks: int,
    kill_every: float,
    executors: list[str],
    kills: int | None = None,
    chaos: bool = True,
    seed: int = 0,
    deadline: float = 900.0,
) -> dict[str, Any]:
    """Run the undisturbed and (with ``chaos``) the disturbed study on each executor;
    the figures, per executor, and the processes left running (none, if all is well).

    ``kills``: kill every (undisturbed wall time / ``kills``) seconds on average instead of
    every ``kill_every`` seconds, whatever the speed of the machine.
    """
    os.environ["KBENCH_CACHE"] = os.environ.get("KBENCH_CACHE") or str(folder / "cache")
    soaker = Soaker(folder, tasks, kill_every, seed, deadline)
    report: dict[str, Any] = {"tasks": tasks, "kill_every": kill_every, "executors": {}}
    try:
        soaker.warm()
        for executor in executors:
            quiet = soaker.run(executor, chaos=False)
            entry: dict[str, Any] = {"undisturbed": quiet.as_dict()}
            if chaos and not quiet.failure:
                if kills:  # spread over the undisturbed run's time
                    soaker.kill_every = quiet.wall / kills
                entry["kill_every"] = soaker.kill_every
                loud = soaker.run(executor, chaos=True)
                loud.failure = loud.failure or compare(Path(loud.out), Path(quiet.out), tasks)
                entry["chaos"] = loud.as_dict()
                entry["ratio"] = loud.wall / quiet.wall if quiet.wall and loud.wall else None
            report["executors"][executor] = entry
    finally:
        soaker.procs.close()
        report["left_running"] = soaker.procs.left_running()
    return report


def _print(report: dict[str, Any]) -> None:
    for executor, entry in report["executors"].items():
        quiet = entry["undisturbed"]
        print(f"{executor}: {report['tasks']} tasks")
        line = f"  undisturbed: {quiet['wall']:.1f} s"
        if executor == "dask":
            mib = {k: v / 2**20 for k, v in quiet["rss"].items()}
            line += (
                f"; results held on the workers at most {quiet['max_held']}; peak RSS: "
                f"driver {mib.get('driver_tasks', 0):.0f} MiB while tasks run "
                f"({mib.get('driver', 0):.0f} MiB with the tables), scheduler "
                f"{mib.get('scheduler', 0):.0f} MiB, worker {mib.get('worker', 0):.0f} MiB"
            )
        print(line + (f"; FAILED: {quiet['failure']}" if quiet["failure"] else ""))
        if "chaos" in entry:
            loud = entry["chaos"]
            kills = (
                f"{loud['worker_kills']} workers"
                if executor == "dask"
                else f"{loud['task_kills']} task processes"
            )
            print(
                f"  chaos: {kills} and the driver {loud['driver_kills']}x killed "
                f"(every {entry['kill_every']:.1f} s on average); {loud['runs']} kbench runs"
            )
            if executor == "dask":
                print(
                    f"  tasks rescheduled from lost workers {loud['rescheduled']}, finished "
                    f"results computed again {loud['recomputed']}, results held at most "
                    f"{loud['max_held']}"
                )
            else:
                print(f"  crashed tasks run again by --retry-failed: {loud['retried']}")
            ratio = entry.get("ratio")
            print(
                f"  wall {loud['wall']:.1f} s against {quiet['wall']:.1f} s undisturbed"
                + (f" ({ratio:.2f}x)" if ratio else "")
            )
            print(
                "  tables equal to the undisturbed run's, every task once: "
                + ("yes" if not loud["failure"] else f"NO: {loud['failure']}")
            )
            print(f"  lines of Dask's own log on kbench's output: {len(loud['dask_log_lines'])}")
    if "dask" in report["executors"] and "local" in report["executors"]:
        d = report["executors"]["dask"]["undisturbed"]["wall"]
        loc = report["executors"]["local"]["undisturbed"]["wall"]
        if d and loc:
            print(f"undisturbed, Dask on 2 workers against local on 2: {d / loc:.2f}x")
    print(f"processes left running: {len(report['left_running'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=600, help="tasks (a multiple of 20)")
    parser.add_argument("--kill-every", type=float, default=15.0, help="seconds between kills")
    parser.add_argument(
        "--kills",
        type=int,
        help="kill every (undisturbed time / KILLS) s instead (about KILLS kills)",
    )
    parser.add_argument("--executor", choices=["dask", "local", "both"], default="both")
    parser.add_argument("--no-chaos", action="store_true", help="the undisturbed runs only")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill times and victims")
    parser.add_argument("--deadline", type=float, default=3600.0, help="seconds per soak at most")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    opts = parser.parse_args()
    # SIGTERM (a test's timeout) ends the script through its clean-up, like Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    folder = opts.keep or Path(tempfile.mkdtemp(prefix="kbench-chaos-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        report = soak(
            folder,
            tasks=opts.tasks,
            kill_every=opts.kill_every,
            executors=["dask", "local"] if opts.executor == "both" else [opts.executor],
            kills=opts.kills,
            chaos=not opts.no_chaos,
            seed=opts.seed,
            deadline=opts.deadline,
        )
    finally:
        if opts.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    if opts.json:
        opts.json.write_text(json.dumps(report, indent=1))
    _print(report)


if __name__ == "__main__":
    main()
