"""What one point of a spec becomes on Kubernetes: the release's Helm values and the kustomization
of its Jobs (manifests/base plus components). Pure functions; the runner applies them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cachelab import loadgen_args
from cachelab.k8s import rtt
from cachelab.k8s.images import job_images
from cachelab.spec import Spec

POOLS = ("a1", "a2", "a4")
LOADGENS = ("cachelab", "memtier")
# Loadgens an overlay can be rendered for: locust prints its own stats, not memtier JSON, so
# `cachelab run --target k8s` (which reads memtier JSON) takes only LOADGENS.
RENDER_LOADGENS = (*LOADGENS, "locust")
BANDWIDTH_PROFILES = ("asl2017", "asl2019", "azure-v2", "off")
SERVER_PORTS = {"memcached": 11211, "redis": 6379}
MIDDLEWARE_PORT = 11212
CHART_NAME = "testbed"


class PlanError(ValueError):
    """A spec field that the Kubernetes runner cannot express (names the field)."""


# Metrics ports per benchmark pod in manifests/components/loadgen-cachelab (METRICS_PORTS).
LOADGEN_METRICS_PORTS = 4


@dataclass(frozen=True)
class Target:
    """Where the Jobs run: the release and the knobs that are not part of the spec."""

    release: str = "testbed"
    loadgen: str = "cachelab"
    bandwidth: str = "asl2017"

    def __post_init__(self) -> None:
        if self.loadgen not in RENDER_LOADGENS:
            raise PlanError(f"loadgen: {self.loadgen!r} is not one of {', '.join(RENDER_LOADGENS)}")
        if self.bandwidth not in BANDWIDTH_PROFILES:
            raise PlanError(
                f"bandwidth: {self.bandwidth!r} is not one of {', '.join(BANDWIDTH_PROFILES)}"
            )

    @property
    def fullname(self) -> str:
        """Object name prefix of the chart (testbed.fullname in _helpers.tpl)."""
        if CHART_NAME in self.release:
            return self.release[:63].rstrip("-")
        return f"{self.release}-{CHART_NAME}"[:63].rstrip("-")


def check(spec: Spec) -> None:
    """Fail with the field's name if the point cannot run on Kubernetes."""
    hosts = spec.topology.hosts
    roles = (("client", hosts.client), ("middleware", hosts.middleware), ("server", hosts.server))
    for field, pool in roles:
        if pool not in POOLS:
            raise PlanError(f"topology.hosts.{field}: {pool!r} is not a pool ({', '.join(POOLS)})")


def release_values(spec: Spec, target: Target) -> dict[str, Any]:
    """Helm values of charts/testbed for a point (merged over the chart's defaults); `links`
    (the RTT sidecars) only when the point's links have RTTs."""
    topo, work = spec.topology, spec.workload
    backend = topo.backend
    values: dict[str, Any] = {
        "memcached": {
            "enabled": backend == "memcached",
            "replicas": topo.servers,
            "pool": topo.hosts.server,
            "threads": spec.server.memcached.threads,
            "memoryMiB": spec.server.memcached.memory_mib,
        },
        "redis": {
            "enabled": backend == "redis",
            "replicas": topo.servers,
            "pool": topo.hosts.server,
            "persistence": spec.server.redis.persistence == "stock",
            "maxmemoryMiB": spec.server.redis.maxmemory_mib,
            "maxmemoryPolicy": spec.server.redis.maxmemory_policy,
        },
        "middleware": {
            "enabled": topo.middlewares > 0,
            "replicas": max(topo.middlewares, 1),
            "workers": topo.workers,
            "workerBatch": topo.worker_batch,
            "eventLoops": topo.event_loops,
            "sharded": work.sharded,
            "routing": work.routing,
            "replication": work.replication,
            "backend": backend,
            "pool": topo.hosts.middleware,
        },
        "clients": {"pool": topo.hosts.client},
        "bandwidth": {"profile": target.bandwidth},
        "networkPolicy": {"clientsToServers": topo.middlewares == 0},
    }
    links = rtt.links_values(spec)
    if links is not None:
        values["links"] = links
    return values


def job_config(spec: Spec, target: Target) -> dict[str, str]:
    """Literals of the benchmark-config ConfigMap (manifests/base/kustomization.yaml). The loadgen
    flags are cachelab.loadgen_args' (as in a local run), one literal each for the measuring
    instances and the two halves of the preload; the scripts pass them on unchanged."""
    topo = spec.topology
    try:
        measure = loadgen_args.measure_args(spec, target.loadgen)
    except loadgen_args.LoadgenArgsError as error:
        raise PlanError(f"{error}; use --loadgen cachelab") from None
    if target.loadgen == "cachelab" and topo.instances_per_machine > LOADGEN_METRICS_PORTS:
        raise PlanError(
            f"topology.instances_per_machine: {topo.instances_per_machine} is more than the "
            f"{LOADGEN_METRICS_PORTS} metrics ports the loadgen-cachelab component declares "
            "(one per instance)"
        )
    config = {
        "TARGET": "middleware" if topo.middlewares > 0 else "servers",
        "MIDDLEWARE_HOST": f"{target.fullname}-middleware",
        "MIDDLEWARE_PORT": str(MIDDLEWARE_PORT),
        "SERVER_STATEFULSET": f"{target.fullname}-{topo.backend}",
        "SERVERS": str(topo.servers),
        "SERVER_PORT": str(SERVER_PORTS[topo.backend]),
        "LOADGEN": target.loadgen,
        "CLIENT_MACHINES": str(topo.client_machines),
        "INSTANCES": str(topo.instances_per_machine),
        "KEY_MAXIMUM": str(spec.workload.key_maximum),
        "LOADGEN_ARGS": loadgen_args.joined(measure),
        "PRELOAD_FILL_ARGS": loadgen_args.joined(loadgen_args.fill_args(spec)),
        "PRELOAD_VERIFY_ARGS": loadgen_args.joined(loadgen_args.verify_args(spec)),
    }
    if target.loadgen == "locust":
        config.update(_locust_config(spec))
    return config


def _locust_config(spec: Spec) -> dict[str, str]:
    """The literals that components/loadgen-locust reads in place of the memtier flags."""
    work = spec.workload
    if work.multi_get > 1:
        raise PlanError(
            f"workload.multi_get: {work.multi_get} is not possible with locust (single-key "
            "gets only); use --loadgen cachelab"
        )
    if spec.topology.client_machines < 2:
        raise PlanError(
            f"topology.client_machines: {spec.topology.client_machines}; locust needs 2 or more "
            "(machine 0 is its master)"
        )
    topo = spec.topology
    return {
        "THREADS": str(topo.threads),
        "CLIENTS": str(topo.clients_per_thread),
        "RATIO": work.ratio,
        "VALUE_BYTES": str(work.value_bytes),
        "DURATION_S": str(spec.run.duration_s),
    }


def kustomization(
    spec: Spec,
    target: Target,
    manifests: Path,
    folder: Path,
    labels: dict[str, str],
    pool_label_key: str = "agentpool",
    pool_label_value: str | None = None,
    image_registry: str = "",
) -> str:
    """kustomization.yaml (to be written in `folder`) for the point's preload and benchmark Jobs.

    `pool_label_key` is the release's `nodePools.labelKey` (`agentpool`, as on AKS) and
    `pool_label_value` the client pool's `labelValue` (default: the pool's name): the client pool
    components select `agentpool: <pool>`, and this kustomization's own patch, applied after the
    components, puts the release's key and value in its place. `image_registry` is the
    release's `global.imageRegistry`: the Jobs' project images move there as the release's do
    (the image-registry component, last, is where a hand-applied overlay moves them)."""

    def rel(path: str) -> str:  # kustomize refuses absolute roots
        return os.path.relpath(manifests / path, folder)

    components = [
        rel(f"components/clients-pool-{spec.topology.hosts.client}"),
        rel("components/target-" + ("middleware" if spec.topology.middlewares else "servers")),
        rel(f"components/loadgen-{target.loadgen}"),
    ]
    if target.bandwidth != "off":
        components.append(rel(f"components/bandwidth-{target.bandwidth}"))
    components.append(rel("components/image-registry"))
    machines = spec.topology.client_machines
    patches: list[dict[str, Any]] = [
        {
            "target": {"kind": "Job"},
            "patch": yaml.safe_dump(
                [
                    {"op": "replace", "path": "/spec/completions", "value": machines},
                    {"op": "replace", "path": "/spec/parallelism", "value": machines},
                    {
                        "op": "replace",
                        "path": "/spec/template/spec/nodeSelector",
                        "value": {pool_label_key: pool_label_value or spec.topology.hosts.client},
                    },
                ]
            ),
        }
    ]
    if target.loadgen == "cachelab":
        # The loadgen-cachelab component labels the benchmark pods with release `testbed`; the
        # PodMonitor relabels that label into `release` and the chart's NetworkPolicy selects it.
        patches.append(
            {
                "target": {"kind": "Job", "name": "benchmark"},
                "patch": yaml.safe_dump(
                    [
                        {
                            "op": "replace",
                            "path": "/spec/template/metadata/labels/app.kubernetes.io~1instance",
                            "value": target.release,
                        }
                    ]
                ),
            }
        )
    if not spec.preload.enabled:
        patches.append(
            {
                "patch": yaml.safe_dump(
                    {
                        "$patch": "delete",
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "metadata": {"name": "preload"},
                    }
                )
            }
        )
    doc = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [rel("base")],
        "components": components,
        "labels": [{"pairs": labels}],
        "configMapGenerator": [
            {
                "name": "benchmark-config",
                "behavior": "merge",
                "literals": [f"{k}={v}" for k, v in job_config(spec, target).items()],
            }
        ],
        "patches": patches,
    }
    if image_registry:
        doc["images"] = job_images(image_registry)
    return yaml.safe_dump(doc, sort_keys=False)
