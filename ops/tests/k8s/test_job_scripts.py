"""The Job scripts of manifests/base (preload.sh, run-benchmark.sh) run for real, outside a
container: POSIX sh, the project's loadgen jar (the `cachelab` loadgen kind) and a memcached on a
free loopback port. kwok never runs them, so this is where their logic is proven: the preload
fills the key slice and verifies zero misses, the benchmark prints one JSON per instance between
the markers that cachelab.k8s.collect parses and each instance's progress line tagged for the
live line, and with METRICS_PORT each instance j gets
`--metrics-port=METRICS_PORT+j` (more instances than declared ports is refused).

memtier_benchmark (the default k8s loadgen) is not packaged for this machine (no Debian package),
so the memtier path is proven in its one memtier-specific part: the script's tagging
(common.sh, tag_progress) fed memtier's stderr bytes (tests/data/memtier-stderr-0.txt, progress
lines ended by carriage returns as memtier writes them) through a fifo, as run-benchmark.sh does,
passes each progress line on, tagged, while the instance still runs."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cachelab.k8s import plan
from cachelab.k8s.collect import result_blocks
from cachelab.k8s.jobs import emitted_status
from cachelab.k8s.progress import progress_lines
from cachelab.local.tools import find_java
from cachelab.spec import parse_spec

from .tools import MANIFESTS, ROOT

pytestmark = pytest.mark.integration

SCRIPTS = MANIFESTS / "base" / "scripts"
PLANNED = (
    "CLIENT_MACHINES",
    "INSTANCES",
    "KEY_MAXIMUM",
    "LOADGEN_ARGS",
    "PRELOAD_FILL_ARGS",
    "PRELOAD_VERIFY_ARGS",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def memcached_port(request: pytest.FixtureRequest) -> Iterator[int]:
    memory_mb = getattr(request, "param", 64)
    port = free_port()
    argv = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", str(memory_mb)]
    if os.geteuid() == 0:
        argv += ["-u", "nobody"]  # memcached refuses to run as root otherwise
    proc = subprocess.Popen(argv)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "memcached exited at start"
                assert time.monotonic() < deadline, f"memcached not listening on {port}"
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def job_env(
    port: int, job: str, value_bytes: int = 64, key_maximum: int = 300, **overrides: str
) -> dict[str, str]:
    """The benchmark-config literals the Kubernetes plan writes for a small point (its loadgen
    flags from cachelab.k8s.plan.job_config), aimed at one memcached on loopback."""
    jar = ROOT / "loadgen" / "target" / "loadgen.jar"
    assert jar.is_file(), f"{jar} is missing: run `make build`"
    spec = parse_spec(
        {
            "name": "scripts",
            "topology": {"client_machines": 1, "instances_per_machine": 2, "threads": 1,
                         "clients_per_thread": 2},
            "workload": {"value_bytes": value_bytes, "key_maximum": key_maximum},
            "run": {"duration_s": 2},
        }
    )  # fmt: skip
    planned = plan.job_config(spec, plan.Target(loadgen="cachelab"))
    config = {
        "SCRIPTS_DIR": str(SCRIPTS),
        "JOB_NAME": job,
        "JOB_COMPLETION_INDEX": "0",
        "TARGET": "middleware",  # any host:port: here memcached itself
        "MIDDLEWARE_HOST": "127.0.0.1",
        "MIDDLEWARE_PORT": str(port),
        "SERVER_STATEFULSET": "unused",
        "SERVERS": "1",
        "SERVER_PORT": str(port),
        "LOADGEN": "cachelab",
        "CACHELAB_LOADGEN_CMD": f"{find_java(ROOT)} -jar {jar}",
        **{k: planned[k] for k in PLANNED},
        "BARRIER_TIMEOUT_S": "30",
        "PRELOAD_VERIFY": "true",
    }
    config.update(overrides)
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **config}


def run_script(name: str, env: dict[str, str], tmp: Path) -> subprocess.CompletedProcess[str]:
    # TMPDIR stands for the pod's /tmp emptyDir, where the scripts keep their files.
    return subprocess.run(
        ["sh", str(SCRIPTS / name)],
        env={**env, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
    )


def test_preload_fills_and_verifies_then_the_benchmark_prints_json_per_instance(
    memcached_port: int, tmp_path: Path
) -> None:
    preload = run_script("preload.sh", job_env(memcached_port, "preload"), tmp_path)
    assert preload.returncode == 0, preload.stderr
    assert "zero misses" in preload.stderr
    blocks = result_blocks(preload.stderr)
    assert [b.instance for b in blocks] == ["fill-0", "verify-0"]
    assert preload.stdout == ""  # one stream: blocks, logs and progress in the order written
    verify = blocks[1].data()["ALL STATS"]["Gets"]
    assert float(verify["Misses/sec"]) == 0 and float(verify["Hits/sec"]) > 0

    bench = run_script("run-benchmark.sh", job_env(memcached_port, "benchmark"), tmp_path)
    assert bench.returncode == 0, bench.stderr
    blocks = result_blocks(bench.stderr)
    assert bench.stdout == ""
    assert [(b.job, b.machine, b.instance) for b in blocks] == [
        ("benchmark", "0", "0"),
        ("benchmark", "0", "hdr-0"),
        ("benchmark", "0", "1"),
        ("benchmark", "0", "hdr-1"),
    ]
    # the HDR interval log of each instance (--hdr-file-prefix, as in a local run)
    for block in blocks[1::2]:
        assert "#[StartTime:" in block.text, block.text[:200]
    for block in blocks[0::2]:
        gets = block.data()["ALL STATS"]["Gets"]
        assert gets["Count"] > 0 and float(gets["Misses/sec"]) == 0  # the keys were preloaded
    # each instance's per-second progress line in the pod's log, tagged (the live line of
    # `cachelab run --target k8s` follows them); the preload stays --quiet
    assert {key for key, _ in progress_lines(bench.stderr)} == {(0, 0), (0, 1)}, bench.stderr
    assert list(progress_lines(preload.stderr)) == []
    # the line after which the runner may take the results: last but the drain, after every block
    assert emitted_status(bench.stderr) == 0
    assert bench.stderr.rindex("results emitted: status 0") > bench.stderr.rindex(
        "cachelab-result-end"
    )


@pytest.mark.parametrize("script", ["preload.sh", "run-benchmark.sh"])
def test_a_job_without_the_release_fails_naming_what_to_install(
    tmp_path: Path, script: str
) -> None:
    hint = "helm upgrade --install testbed charts/testbed -f overlay/testbed-values.yaml --wait"
    env = job_env(
        1,
        script.removesuffix(".sh"),
        MIDDLEWARE_HOST="testbed-middleware.invalid",
        RELEASE_WAIT_S="1",
        RELEASE_HINT=hint,
    )
    proc = run_script(script, env, tmp_path)
    assert proc.returncode == 3, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "no testbed release in this namespace: testbed-middleware.invalid" in line
    assert line.endswith(f"Install it first: {hint}")


@pytest.mark.parametrize("memcached_port", [8], indirect=True)
def test_preload_fails_when_the_verify_reads_miss(memcached_port: int, tmp_path: Path) -> None:
    # 1000 values of 64 KiB do not fit in 8 MiB: memcached evicts most of them while the fill
    # runs, so the read-back misses; the preload must say so and exit 1.
    env = job_env(memcached_port, "preload", value_bytes=65536, key_maximum=1000)
    preload = run_script("preload.sh", env, tmp_path)
    assert preload.returncode == 1, preload.stderr
    assert "preload verification failed: 127.0.0.1:" in preload.stderr
    assert "(expected 0)" in preload.stderr


@contextmanager
def held_port_above_a_free_one() -> Iterator[int]:
    """A free port p, with p + 1 held by a listening socket for the duration."""
    for _ in range(50):
        first = free_port()
        with socket.socket() as held:
            try:
                held.bind(("0.0.0.0", first + 1))
            except OSError:
                continue
            held.listen()
            yield first
            return
    raise AssertionError("no free port with a free neighbour")


def test_benchmark_refuses_more_instances_than_metrics_ports(
    memcached_port: int, tmp_path: Path
) -> None:
    env = job_env(memcached_port, "benchmark", METRICS_PORT="9500", METRICS_PORTS="1")
    bench = run_script("run-benchmark.sh", env, tmp_path)
    assert bench.returncode == 2, bench.stderr
    assert "INSTANCES=2 but the Job declares METRICS_PORTS=1 metrics ports" in bench.stderr


def test_benchmark_passes_each_instance_its_metrics_port(
    memcached_port: int, tmp_path: Path
) -> None:
    # Instance j gets METRICS_PORT + j. Instance 1's port is held by a listening socket here,
    # so that instance (and only it) must fail to serve its metrics; instance 0 runs normally
    # on the free port just below.
    with held_port_above_a_free_one() as first:
        env = job_env(memcached_port, "benchmark", METRICS_PORT=str(first), METRICS_PORTS="2")
        bench = run_script("run-benchmark.sh", env, tmp_path)
    assert bench.returncode == 1, bench.stderr
    assert "instance 1 failed" in bench.stderr and "instance 0 failed" not in bench.stderr
    assert [b.instance for b in result_blocks(bench.stderr)] == ["0", "hdr-0"]


@pytest.mark.parametrize("tools", ["machine", "busybox"])
def test_memtier_progress_lines_are_tagged_while_the_instance_runs(
    tools: str, tmp_path: Path
) -> None:
    """`machine`: this machine's sh and GNU tr under stdbuf (as in the memtier image, whose
    coreutils has stdbuf); `busybox`: only busybox's tr on the PATH, no stdbuf (as in the
    project's loadgen image)."""
    stderr = (ROOT / "ops" / "tests" / "data" / "memtier-stderr-0.txt").read_text().splitlines()
    # memtier's stderr: its first lines end in a newline, each progress line in a carriage
    # return (rewritten in place on a terminal), and the run in two newlines
    launch = [line for line in stderr if " secs]" not in line]
    progress = [line for line in stderr if " secs]" in line]
    first = "".join(line + "\n" for line in launch) + progress[0] + "\r" + progress[1] + "\r"
    rest = "".join(line + "\r" for line in progress[2:]) + "\n\n"
    fifo = tmp_path / "stderr-0"
    os.mkfifo(fifo)
    pod_log = tmp_path / "pod.log"
    instance_log = tmp_path / "loadgen-0.log"
    script = f'. "{SCRIPTS}/common.sh"; tag_progress 0 "{instance_log}" <"{fifo}"'
    path = os.environ["PATH"]
    if tools == "busybox":
        busybox = shutil.which("busybox")
        assert busybox is not None, "busybox is missing: scripts/install-debs.sh installs it"
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "tr").symlink_to(busybox)
        path = str(bin_dir)  # sh's builtins and busybox's tr: no stdbuf
    env = {"PATH": path, "JOB_NAME": "benchmark", "JOB_COMPLETION_INDEX": "2"}
    with pod_log.open("w") as err:
        tagger = subprocess.Popen(
            [shutil.which("sh") or "/bin/sh", "-c", script], env=env, stderr=err
        )
    try:
        with fifo.open("w") as writer:
            writer.write(first)
            writer.flush()
            # the first two progress lines reach the pod's log before memtier ends (the fifo
            # is still open): memtier's carriage returns end lines, nothing waits for more
            deadline = time.monotonic() + 30
            while len(list(progress_lines(pod_log.read_text()))) < 2:
                assert time.monotonic() < deadline, pod_log.read_text()
                assert tagger.poll() is None
                time.sleep(0.05)
            writer.write(rest)
        assert tagger.wait(timeout=30) == 0
    finally:
        if tagger.poll() is None:
            tagger.kill()
            tagger.wait()
    found = list(progress_lines(pod_log.read_text()))
    assert [key for key, _ in found] == [(2, 0)] * len(progress)
    assert [s.second for _, s in found] == [1, 2, 3, 4, 4]
    assert found[0][1].ops_per_s == 9645 and found[0][1].p99_ms is None
    # only the progress lines are tagged; the instance's file has every line, one per line
    assert len(pod_log.read_text().splitlines()) == len(progress)
    kept = [line for line in instance_log.read_text().splitlines() if line]
    assert kept == stderr
