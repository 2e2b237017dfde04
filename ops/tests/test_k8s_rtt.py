"""The links' round-trip times on Kubernetes without a cluster: what a spec's `network` section
becomes in the release's values (cachelab.k8s.plan, cachelab.k8s.rtt), the probe pods that time
each link, and the records they make (the local runner's layout, so summary.csv's
`rtt_<link>_p50_ms` columns and the ±10 % flag follow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.k8s import plan, rtt
from cachelab.local.latency import off_links, off_message
from cachelab.paths import repo_root
from cachelab.spec import load_spec
from cachelab.summary import _achieved_rtts

QUICKSTART = repo_root() / "ops" / "experiments" / "quickstart.yaml"
RTT_VARIANT = repo_root() / "ops" / "experiments" / "asl17-rtt-variant.yaml"

VALUES: dict[str, Any] = {  # what `helm get values --all` gives, the parts the probes read
    "nameOverride": "",
    "nodePools": {"labelKey": "agentpool", "sizes": {"a2": {}, "a4": {"labelValue": "big"}}},
    "links": {
        "toxiproxy": {
            "image": {"repository": "cachelab.local/toxiproxy", "tag": "2.5.0-sub-ms"},
            "resources": {"requests": {"cpu": "4m"}},
        }
    },
    "podSecurityContext": {"runAsNonRoot": True},
    "containerSecurityContext": {"readOnlyRootFilesystem": True},
    "tolerations": [{"key": "sku", "operator": "Exists"}],
    "imagePullSecrets": [],
}


def test_a_profile_puts_its_rtts_into_the_release_values() -> None:
    spec = load_spec(QUICKSTART, ["network.profile=asl2017"])
    values = plan.release_values(spec, plan.Target())
    assert values["links"]["rttMs"] == {"clientMw": 2.3, "mwServer": 2.0}
    assert values["links"]["jitterMs"] == {"clientMw": 0.0, "mwServer": 0.0}
    assert (
        "toxiproxy" not in values["links"]
    )  # the chart's default: Go's GOMAXPROCS, the node's CPUs


def test_without_rtts_the_release_values_have_no_links_section() -> None:
    values = plan.release_values(load_spec(QUICKSTART), plan.Target())
    assert "links" not in values  # the chart's default: no sidecar, the release as before


def test_overrides_and_jitter_reach_the_values() -> None:
    spec = load_spec(
        QUICKSTART,
        [
            "network.profile=asl2019",
            "network.rtt_ms.client_mw=1.5",
            "network.jitter_ms.mw_server=0.1",
        ],
    )
    links = plan.release_values(spec, plan.Target())["links"]
    assert links["rttMs"] == {"clientMw": 1.5, "mwServer": 0.9}
    assert links["jitterMs"] == {"clientMw": 0.0, "mwServer": 0.1}


def test_a_sweep_over_the_profile_changes_the_rtts_per_point() -> None:
    spec = load_spec(RTT_VARIANT)
    seen = {
        point.values["network.profile"]: plan.release_values(point.spec, plan.Target())["links"][
            "rttMs"
        ]
        for point in spec.points()
    }
    assert seen == {
        "asl2017": {"clientMw": 2.3, "mwServer": 2.0},
        "asl2017-fig11": {"clientMw": 0.5, "mwServer": 2.5},
    }


def test_a_baseline_delays_the_loadgens_link_to_the_servers() -> None:
    spec = load_spec(QUICKSTART, ["topology.middlewares=0", "network.rtt_ms.client_server=0.9"])
    values = plan.release_values(spec, plan.Target())
    assert values["links"]["rttMs"] == {"clientServer": 0.9}
    assert values["middleware"]["enabled"] is False


def test_one_probe_pod_per_link_on_its_near_end() -> None:
    spec = load_spec(QUICKSTART, ["network.profile=asl2017"])
    middlewares = {"testbed-middleware-x": "10.0.3.1:11212"}
    servers = {"testbed-memcached-0": "10.0.1.1:11211", "testbed-memcached-1": "10.0.1.2:11211"}
    pods = rtt.probe_pods(spec, "testbed", middlewares, servers)
    assert [(p.name, p.role, p.pool, [t.pod for t in p.targets]) for p in pods] == [
        ("testbed-rtt-client-mw", "loadgen", "a2", ["testbed-middleware-x"]),
        ("testbed-rtt-mw-server", "middleware", "a4", list(servers)),
    ]
    manifest = rtt.probe_manifest(pods[1], spec, "testbed", VALUES, {"cachelab.dev/run": "p0-r0"})
    labels = manifest["metadata"]["labels"]
    # held by the release's NetworkPolicies as a middleware is; no role's CPU (component)
    assert labels["cachelab.dev/role"] == "middleware"
    assert labels["app.kubernetes.io/instance"] == "testbed"
    assert labels["app.kubernetes.io/name"] == "testbed"
    assert labels["app.kubernetes.io/component"] == rtt.COMPONENT
    assert labels["cachelab.dev/run"] == "p0-r0"
    pod = manifest["spec"]
    assert pod["nodeSelector"] == {"agentpool": "big"}  # the pool's labelValue
    assert pod["restartPolicy"] == "Never"
    assert pod["tolerations"] == VALUES["tolerations"]
    container = pod["containers"][0]
    assert container["image"] == "cachelab.local/toxiproxy:2.5.0-sub-ms"
    assert container["command"] == [
        "/bin/rttprobe",
        "-protocol",
        "memcache_text",
        "-n",
        "200",
        "10.0.1.1:11211",
        "10.0.1.2:11211",
    ]


def test_a_baseline_probes_the_servers_from_the_client_pool() -> None:
    spec = load_spec(QUICKSTART, ["topology.middlewares=0", "network.profile=asl2019"])
    pods = rtt.probe_pods(spec, "exp", {}, {"exp-testbed-memcached-0": "10.0.1.1:11211"})
    assert [(p.name, p.role, p.pool) for p in pods] == [("exp-rtt-client-server", "loadgen", "a2")]


def probe_output(*entries: tuple[str, list[float] | str]) -> str:
    lines = []
    for address, samples in entries:
        if isinstance(samples, str):
            lines.append(json.dumps({"addr": address, "error": samples}))
        else:
            lines.append(json.dumps({"addr": address, "samples_ms": samples}))
    return "\n".join(lines) + "\n"


def test_records_are_the_local_runners_and_flag_a_link_off_by_more_than_ten_percent() -> None:
    spec = load_spec(QUICKSTART, ["network.profile=asl2017"])
    servers = {"testbed-memcached-0": "10.0.1.1:11211", "testbed-memcached-1": "10.0.1.2:11211"}
    pod = rtt.probe_pods(spec, "testbed", {}, servers)[-1]
    log = probe_output(
        ("10.0.1.1:11211", [2.05, 2.1, 2.2, 2.15, 2.1]),  # within ±10 % of 2 ms
        ("10.0.1.2:11211", [2.6, 2.5, 2.7, 2.6, 2.55]),  # 30 % over
    )
    records = rtt.records(pod, log)
    assert [(r["proxy"], r["link"], r["within_10pct"]) for r in records] == [
        ("testbed-memcached-0/toxiproxy", "mw_server", True),
        ("testbed-memcached-1/toxiproxy", "mw_server", False),
    ]
    assert records[0]["achieved"]["p50_ms"] == 2.1
    assert records[0]["rtt_ms"] == 2.0 and records[0]["toxic_one_way_ms"] == 1.0
    flagged = off_links(records)
    assert flagged == ["testbed-memcached-1/toxiproxy p50 2.600 ms vs 2 ms"]
    assert off_message(flagged) == (
        "RTT outside ±10 % of the spec's: testbed-memcached-1/toxiproxy p50 2.600 ms vs 2 ms"
    )
    # summary.csv's column: the mean over the link's instances, as locally
    assert _achieved_rtts({"links": records}) == {"rtt_mw_server_p50_ms": pytest.approx(2.35)}


def test_a_probe_without_an_answer_names_the_pod_and_the_cause() -> None:
    spec = load_spec(QUICKSTART, ["network.profile=asl2017"])
    pod = rtt.probe_pods(spec, "testbed", {"testbed-middleware-x": "10.0.3.1:11212"}, {})[0]
    log = probe_output(("10.0.3.1:11212", "dial tcp 10.0.3.1:11212: connect: connection refused"))
    with pytest.raises(rtt.ProbeError, match=r"testbed-middleware-x .* connection refused"):
        rtt.records(pod, log)
    with pytest.raises(rtt.ProbeError, match="no result"):
        rtt.records(pod, "")


def test_the_probe_program_is_in_the_image_recipe() -> None:
    images = (repo_root() / "scripts" / "images.sh").read_text()
    assert "rttprobe" in images and rtt.PROBE_BINARY == "/bin/rttprobe"
    source = (repo_root() / "scripts" / "images" / "rttprobe" / "main.go").read_text()
    for protocol in ("memcache_text", "redis"):
        assert f'"{protocol}"' in source


def test_the_helm_values_of_a_spec_pass_the_chart(tmp_path: Path) -> None:
    """The keys the plan writes are the chart's (its schema is closed)."""
    schema = json.loads((repo_root() / "charts" / "testbed" / "values.schema.json").read_text())
    links = schema["properties"]["links"]["properties"]
    spec = load_spec(QUICKSTART, ["network.profile=asl2017"])
    values = plan.release_values(spec, plan.Target())["links"]
    assert set(values["rttMs"]) <= set(links["rttMs"]["properties"])
    assert set(values) <= set(links)


class FakeKube:
    """kubectl as the runner's probe step uses it: the release's pods on a real node (or a
    kwok one), a probe pod that succeeds at once with `log`, and the execs into the sidecars."""

    namespace = "exp"

    def __init__(self, log: str, kwok: bool = False) -> None:
        self.log, self.kwok = log, kwok
        self.applied: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.toxics: list[tuple[str, str]] = []  # (sidecar pod, one-way ms) per exec
        self.restarts = 0  # of the memcached pod's containers

    def kubectl(self, *args: str, timeout_s: float | None = None) -> str:
        if args[:2] == ("apply", "-f"):
            self.applied.append(yaml.safe_load(Path(args[2]).read_text()))
        elif args[:2] == ("delete", "pod"):
            self.deleted.append(args[2])
        elif args[0] == "exec":
            assert args[2:6] == ("-c", "toxiproxy", "--", "sh")
            assert args[7] == rtt.SET_TOXICS
            self.toxics.append((args[1], args[9]))
        return ""

    def get(self, *args: str) -> Any:
        def pod(name: str, component: str, ip: str) -> dict[str, Any]:
            labels = {"app.kubernetes.io/component": component}
            meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "labels": labels}
            restarts = self.restarts if component == "memcached" else 0
            containers = [{"name": component, "restartCount": restarts}]
            status = {"phase": "Running", "podIP": ip, "containerStatuses": containers}
            return {"metadata": meta, "status": status, "spec": {"nodeName": "n1"}}

        if args[0] == "pods":
            if "component=middleware" in args[2]:
                return {"items": [pod("testbed-middleware-x", "middleware", "10.0.3.1")]}
            return {"items": [pod("testbed-memcached-0", "memcached", "10.0.1.1")]}
        if args[0] == "pod":
            return {"spec": {"nodeName": "n2"}, "status": {"phase": "Succeeded"}}
        annotations = {"kwok.x-k8s.io/node": "fake"} if self.kwok else {}
        return {"metadata": {"annotations": annotations}}

    def logs(self, pod: str, container: str) -> str:
        assert container == "rttprobe"
        return self.log


def prober_of(kube: FakeKube) -> Any:
    from cachelab.k8s.links import LinkProber
    from cachelab.k8s.release import ReleaseKeeper
    from cachelab.k8s.scrape import MiddlewareScraper

    release = ReleaseKeeper(kube, "testbed", Path(), [], 60)  # type: ignore[arg-type]
    scraper = MiddlewareScraper(kube, "testbed")  # type: ignore[arg-type]
    return LinkProber(kube, plan.Target(), release, scraper)  # type: ignore[arg-type]


def probe_step(tmp_path: Path, kube: FakeKube, prober: Any = None) -> dict[str, Any]:
    spec = load_spec(QUICKSTART, ["network.profile=asl2017"])
    prober = prober if prober is not None else prober_of(kube)
    network: dict[str, Any] = prober.probe(spec, VALUES, {"cachelab.dev/run": "p0-r0"}, tmp_path)
    return network


def test_the_runner_calibrates_and_times_each_link_from_probe_pods(tmp_path: Path) -> None:
    # the fastest round trips: client_mw 2.5 (0.2 over 2.3), mw_server 2.1 (0.1 over 2)
    log = probe_output(("10.0.3.1:11212", [2.5, 2.6, 2.55]), ("10.0.1.1:11211", [2.1, 2.2, 2.15]))
    kube = FakeKube(log)
    network = probe_step(tmp_path, kube)
    # per link: the sidecars at half the RTT, a trial, the toxics less half the extra, a measure
    assert kube.toxics == [
        ("testbed-middleware-x", "1.1500"),
        ("testbed-middleware-x", "1.0500"),
        ("testbed-memcached-0", "1.0000"),
        ("testbed-memcached-0", "0.9500"),
    ]
    assert [m["metadata"]["name"] for m in kube.applied] == [
        "testbed-rtt-client-mw",
        "testbed-rtt-client-mw",
        "testbed-rtt-mw-server",
        "testbed-rtt-mw-server",
    ]
    assert set(kube.deleted) == {"testbed-rtt-client-mw", "testbed-rtt-mw-server"}
    assert (tmp_path / "testbed-rtt-mw-server.yaml").is_file()  # kept with the run's k8s files
    records = network["links"]
    assert [(r["link"], r["achieved"]["p50_ms"], r["toxic_one_way_ms"]) for r in records] == [
        ("client_mw", 2.55, 1.05),
        ("mw_server", 2.15, 0.95),
    ]
    # 2.15 vs 2 is within ±10 %, 2.55 vs 2.3 is not (a fake: the same log before and after)
    assert network["flagged"] == ["testbed-middleware-x/toxiproxy p50 2.550 ms vs 2.3 ms"]
    assert network["probe"] == "mn"
    assert _achieved_rtts(network) == {
        "rtt_client_mw_p50_ms": 2.55,
        "rtt_mw_server_p50_ms": 2.15,
    }


def test_the_links_are_measured_again_only_when_something_they_depend_on_changed(
    tmp_path: Path,
) -> None:
    """Same revision, pods, links and probe: the last record, marked reused, with no probe pod;
    a server's container restarted (its sidecar's toxics gone): measured again."""
    log = probe_output(("10.0.3.1:11212", [2.4, 2.4]), ("10.0.1.1:11211", [2.1, 2.1]))
    kube = FakeKube(log)
    prober = prober_of(kube)
    first = probe_step(tmp_path, kube, prober)
    assert len(kube.applied) == 4 and "reused" not in first
    again = probe_step(tmp_path, kube, prober)
    assert len(kube.applied) == 4, "no probe pod when nothing changed"
    assert again["links"] == first["links"] and "previous point's measure" in again["reused"]
    kube.restarts = 1
    third = probe_step(tmp_path, kube, prober)
    assert len(kube.applied) == 8 and "reused" not in third


def test_calibration_takes_off_half_the_extra_each_way_and_never_goes_below_zero() -> None:
    link = load_spec(QUICKSTART, ["network.profile=asl2017"]).links()[1]  # mw_server, 2 ms
    assert rtt.calibrated_one_way(link, 2.4) == pytest.approx(0.8)
    assert rtt.calibrated_one_way(link, 9.0) == 0.0


def test_on_kwok_the_links_are_not_measured_and_the_record_says_why(tmp_path: Path) -> None:
    kube = FakeKube("", kwok=True)
    network = probe_step(tmp_path, kube)
    assert network["links"] == [] and kube.applied == [] and kube.toxics == []
    assert network["problems"] == [
        "testbed-rtt-client-mw: its sidecars' nodes are simulated by kwok: not measured",
        "testbed-rtt-mw-server: its sidecars' nodes are simulated by kwok: not measured",
    ]
