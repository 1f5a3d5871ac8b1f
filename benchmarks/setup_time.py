"""Set-up time from scratch: the llama-cpp-python build before/after, and README's whole first command.

Everything is built in temporary directories (a fresh venv, an empty $XDG_CACHE_HOME so no cached wheel,
pip cache or GGUF is reused, an empty npm cache); the project's .venv and ~/.cache/nbagent are not touched.

    python benchmarks/setup_time.py build [--variant before|after|both] [--tps]
        builds llama-cpp-python 0.3.36 from its sdist: "before" with the flags of the old set-up (everything
        the sdist builds: ggml, libllama, llama-common, mtmd), "after" with scripts/install_default_model.sh
        --wheel-only. --tps installs each wheel in its venv and measures the default model's tokens/s.
    python benchmarks/setup_time.py setup [--ref REF] [--no-quickstart]
        runs `bash scripts/setup.sh && .venv/bin/nbagent quickstart` in a clone of REF (default: the
        working tree's HEAD) and prints the set-up's own stage lines. Compare with --ref 837ffd8 (the serial set-up
        that built everything; `--keep-log F` also writes F.freeze, the pip freeze of the set-up's venv).

Each run prints wall time, CPU time (user+sys of everything it started) and how busy the machine was
with other work meanwhile (cores' worth, from /proc/stat), since on a shared 2-core machine wall time
alone says little. Takes 5-30 minutes per build; not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.3.36"
# the old scripts/install_default_model.sh build (up to commit 837ffd8)
BEFORE_CMAKE_ARGS = (
    "-DGGML_NATIVE=ON -DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' "
    "-DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'"
)
GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

TPS_CODE = r"""
import json, os, sys, time
import llama_cpp
threads, n_gen, repeats = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=2048, n_threads=threads, n_threads_batch=threads, seed=0,
                      verbose=False, use_mmap=False)
toks = llm.tokenize(("Write a Python function that returns the n-th Fibonacci number, with a docstring "
                     "and a test.\n" * 4).encode())
runs = []
for _ in range(repeats):
    llm.reset()
    c, t = time.process_time(), time.perf_counter()
    llm.eval(toks)
    pp_cpu, pp = time.process_time() - c, time.perf_counter() - t
    out = []
    c, t = time.process_time(), time.perf_counter()
    for _ in range(n_gen):
        out.append(llm.sample(temp=0.0)); llm.eval([out[-1]])
    tg_cpu, tg = time.process_time() - c, time.perf_counter() - t
    runs.append({"pp": len(toks) / pp, "tg": n_gen / tg, "pp_cpu_ms": 1000 * pp_cpu / len(toks),
                 "tg_cpu_ms": 1000 * tg_cpu / n_gen})
print(json.dumps({"prompt_tokens": len(toks), "runs": runs, "text": llm.detokenize(out).decode(errors="ignore")}))
"""


def busy_seconds() -> float:
    """CPU-seconds the whole machine has spent busy since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    ticks = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - fields[3] - fields[4]) / ticks  # minus idle and iowait


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(label: str, cmd: list[str], log: Path, **kwargs) -> dict:
    """Run `cmd` (output to `log`), return wall, our CPU, and the other work on the machine meanwhile."""
    cpu0, busy0, t0 = children_cpu(), busy_seconds(), time.monotonic()
    with log.open("w") as out:
        result = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    wall = time.monotonic() - t0
    cpu = children_cpu() - cpu0
    others = max(0.0, busy_seconds() - busy0 - cpu) / wall
    row = {"stage": label, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "others_cores": round(others, 2)}
    row["ok"] = result.returncode == 0
    print(
        f"{label:<34} wall {wall:7.1f} s   cpu {cpu:7.1f} s   other work on the machine: {others:.2f} cores"
        + ("" if row["ok"] else f"   FAILED (exit {result.returncode}, log: {log})"),
        flush=True,
    )
    return row


def fresh_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp / "cache")  # pip's cache, nbagent's wheel cache and GGUF
    env["npm_config_cache"] = str(tmp / "npm-cache")
    env.pop("VIRTUAL_ENV", None)
    return env


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    subprocess.run([str(path / "bin/pip"), "install", "-q", "-U", "pip", "wheel"], check=True)
    return path / "bin/python"


def build(variant: str, tmp: Path, sdist: Path) -> tuple[dict, Path | None, Path]:
    env = fresh_env(tmp)
    python = make_venv(tmp / "venv")
    wheels = tmp / "cache/nbagent/wheels"
    if variant == "before":
        wheels.mkdir(parents=True)
        env["CMAKE_ARGS"] = BEFORE_CMAKE_ARGS
        cmd = [str(python), "-m", "pip", "wheel", "--no-cache-dir", "--no-deps", "-w", str(wheels), str(sdist)]
    else:
        # the script downloads the sdist itself; point pip at the one already here so both time the same work
        env["PIP_FIND_LINKS"] = f"{sdist.parent} {env.get('PIP_FIND_LINKS', '')}".strip()
        cmd = ["bash", str(ROOT / "scripts/install_default_model.sh"), "--wheel-only", str(python)]
    row = timed(f"llama-cpp-python wheel ({variant})", cmd, tmp / "build.log", env=env)
    found = sorted(wheels.glob(f"llama_cpp_python-{VERSION}-*.whl"))
    if found:
        libs = subprocess.run(["unzip", "-Z1", str(found[0])], capture_output=True, text=True).stdout.split()
        row["libs"] = sorted({Path(n).name.split(".so")[0] for n in libs if ".so" in n})
        row["wheel_mb"] = round(found[0].stat().st_size / 2**20, 1)
        print(f"  {found[0].name}: {row['wheel_mb']} MB, libraries: {', '.join(row['libs'])}")
    return row, (found[0] if found else None), python


def tokens_per_second(python: Path, wheel: Path, gguf: Path, args: argparse.Namespace) -> dict:
    """The default model's speed with this build. CPU ms per token with 1 thread is the number to compare
    on a shared machine (other work barely moves it); tokens/s (wall) is what a user sees on an idle one."""
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-cache-dir", str(wheel)], check=True)
    env = dict(os.environ, OMP_WAIT_POLICY="passive")  # no spinning: CPU time is work done
    cmd = [str(python), "-c", TPS_CODE, str(gguf), str(args.threads), str(args.new_tokens), str(args.repeats)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    data = json.loads(out.strip().splitlines()[-1])
    best = {k: max(r[k] for r in data["runs"]) for k in ("pp", "tg")}
    best |= {k: min(r[k] for r in data["runs"]) for k in ("pp_cpu_ms", "tg_cpu_ms")}
    print(
        f"  {args.threads} thread(s), best of {args.repeats}: prompt {best['pp']:.1f} tok/s "
        f"({best['pp_cpu_ms']:.1f} CPU ms/token), generation {best['tg']:.2f} tok/s "
        f"({best['tg_cpu_ms']:.1f} CPU ms/token); text: {data['text'][:60]!r}"
    )
    return {k: round(v, 2) for k, v in best.items()} | {"text": data["text"]}


def cmd_build(args: argparse.Namespace) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="setup-time-") as tmpdir:
        tmp = Path(tmpdir)
        sdist_dir = tmp / "sdist"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            + ["-d", str(sdist_dir), f"llama-cpp-python=={VERSION}"],
            check=True,
        )
        sdist = next(sdist_dir.iterdir())
        variants = ["before", "after"] if args.variant == "both" else [args.variant]
        for variant in variants:
            row, wheel, python = build(variant, tmp / variant, sdist)
            if args.tps and wheel:
                row.update(tokens_per_second(python, wheel, args.gguf, args))
            rows.append(row)
    return rows


def cmd_setup(args: argparse.Namespace) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="setup-time-") as tmpdir:
        tmp = Path(tmpdir)
        repo = tmp / "repo"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", args.ref], check=True)
        env = fresh_env(tmp)
        cmd = "bash scripts/setup.sh" + ("" if args.no_quickstart else " && .venv/bin/nbagent quickstart")
        row = timed(f"setup {args.ref}: {cmd}", ["bash", "-c", cmd], tmp / "setup.log", cwd=repo, env=env)
        for line in (tmp / "setup.log").read_text(errors="replace").splitlines():
            if line.startswith("[setup") or "set-up done" in line or "default model works" in line:
                print(f"  {line}")
        if args.keep_log:  # the log, and what got installed (to compare two refs' set-ups)
            shutil.copy(tmp / "setup.log", args.keep_log)
            freeze = subprocess.run(
                [str(repo / ".venv/bin/pip"), "freeze", "--all"], capture_output=True, text=True, cwd=repo
            ).stdout
            Path(f"{args.keep_log}.freeze").write_text(freeze)
    return [row]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="the llama-cpp-python wheel build, before/after")
    b.add_argument("--variant", choices=["before", "after", "both"], default="both")
    b.add_argument("--tps", action="store_true", help="also measure the default model's tokens/s per build")
    b.add_argument("--gguf", type=Path, default=Path.home() / ".cache/nbagent" / GGUF)
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--new-tokens", type=int, default=64)
    b.add_argument("--repeats", type=int, default=3)
    s = sub.add_parser("setup", help="README's first command in a fresh clone")
    s.add_argument("--ref", default="HEAD")
    s.add_argument("--no-quickstart", action="store_true")
    s.add_argument("--keep-log", type=Path)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    rows = cmd_build(args) if args.cmd == "build" else cmd_setup(args)
    print(json.dumps(rows))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
