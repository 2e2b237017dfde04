"""Flags the local runner gives the loadgen and the middleware for a spec."""

from __future__ import annotations

from pathlib import Path

from cachelab.local.commands import loadgen_argv, middleware_argv, preload_argv, verify_argv
from cachelab.spec import parse_spec

SPEC = parse_spec(
    {
        "name": "t",
        "topology": {"threads": 2, "clients_per_thread": 4, "workers": 16, "servers": 2},
        "workload": {"ratio": "1:3", "value_bytes": 512, "key_maximum": 500, "multi_get": 3,
                     "think_time_ms": 1.5, "sharded": True},
        "run": {"duration_s": 7, "warmup_s": 1, "cooldown_s": 2},
    }
)  # fmt: skip
JAR = Path("/x/loadgen.jar")


def flags(argv: list[str]) -> list[str]:
    return argv[argv.index("-jar") + 2 :]


def test_loadgen_gets_memtier_flags_for_the_point() -> None:
    argv = flags(loadgen_argv("java", JAR, SPEC, "127.0.0.1", 9000, Path("o.json"), Path("h")))
    for flag in [
        "--server=127.0.0.1", "--port=9000", "--protocol=memcache_text", "--threads=2",
        "--clients=4", "--ratio=1:3", "--key-pattern=R:R", "--key-maximum=500",
        "--data-size=512", "--test-time=7", "--json-out-file=o.json", "--hdr-file-prefix=h",
        "--multi-key-get=3", "--think-time=1.5", "--quiet",
    ]:  # fmt: skip
        assert flag in argv, flag


def test_preload_writes_every_key_once_and_the_check_only_reads() -> None:
    preload = flags(preload_argv("java", JAR, SPEC, "127.0.0.1", 9001, Path("p.json")))
    assert {"--ratio=1:0", "--requests=allkeys", "--key-pattern=P:P"} <= set(preload)
    assert not any(f.startswith("--test-time") for f in preload)
    check = flags(verify_argv("java", JAR, SPEC, "127.0.0.1", 9001, Path("c.json")))
    assert "--ratio=0:1" in check
    assert "--key-maximum=500" in check


def test_middleware_gets_asl_flags_and_trimming() -> None:
    argv = flags(middleware_argv("java", JAR, SPEC, "127.0.0.1", 9100, ["h:1", "h:2"], Path("/s")))
    assert argv[:10] == ["-l", "127.0.0.1", "-p", "9100", "-t", "16", "-s", "true", "-m", "h:1"]
    assert argv[10] == "h:2"
    joined = " ".join(argv)
    assert "--stats-dir /s" in joined
    assert "--warmup-s 1 --cooldown-s 2" in joined
    assert "--routing round-robin --replication 1" in joined
    assert "--worker-batch 1" in joined
    assert "--event-loops 0" in joined
    assert "--protocol memcached" in joined


def test_middleware_speaks_redis_in_front_of_redis() -> None:
    spec = SPEC.model_copy(
        update={
            "topology": SPEC.topology.model_copy(update={"backend": "redis"}),
            "workload": SPEC.workload.model_copy(update={"protocol": "redis"}),
        }
    )
    argv = flags(middleware_argv("java", JAR, spec, "127.0.0.1", 9100, ["h:1"], Path("/s")))
    assert argv[argv.index("--protocol") + 1] == "redis"
    loadgen = flags(loadgen_argv("java", JAR, spec, "127.0.0.1", 9000, Path("o.json"), Path("h")))
    assert "--protocol=redis" in loadgen


def test_middleware_gets_the_spec_worker_batch() -> None:
    spec = SPEC.model_copy(
        update={"topology": SPEC.topology.model_copy(update={"worker_batch": 16})}
    )
    argv = flags(middleware_argv("java", JAR, spec, "127.0.0.1", 9100, ["h:1"], Path("/s")))
    assert argv[argv.index("--worker-batch") + 1] == "16"


def test_middleware_gets_the_spec_event_loops() -> None:
    spec = SPEC.model_copy(update={"topology": SPEC.topology.model_copy(update={"event_loops": 2})})
    argv = flags(middleware_argv("java", JAR, spec, "127.0.0.1", 9100, ["h:1"], Path("/s")))
    assert argv[argv.index("--event-loops") + 1] == "2"
    assert argv.count("--event-loops") == 1
