"""The links' round-trip times on a cluster: what a spec's `network` section becomes in the
release (the chart's `links.*`: a toxiproxy sidecar in the pods on each link's far end, half the
RTT each way, as the local runner's proxies), and how a run measures what the links achieve.

Measured, not assumed: after the preload, with the system idle, the runner starts short pods
(a trial, then the measure) per link on the link's near end, running `rttprobe` of the toxiproxy
image (scripts/images.sh): on the client pool, labelled as a loadgen, for `client_mw` (to each
middleware pod) and `client_server` (to each server pod, baselines); on the middleware pool,
labelled as a middleware, for `mw_server` (to each server pod). Each times PROBES small round
trips, one at a time, through the pod's sidecar over the cluster's network (memcached `mn`,
answered `MN` by memcached and by the middleware itself; RESP `PING` for redis), so the achieved
RTT includes the network's own and the proxy's.

Calibrated as the local runner's proxies are: each link's sidecars are set to half the RTT each
way (`kubectl exec` into them; a sidecar kept from the previous point may hold another value),
a trial probe's fastest round trip less the RTT is what the network and the proxy add, each
direction's toxic is lowered by half of that, and a second probe measures. point.json's
`network` holds the records in the local runner's layout (cachelab.local.latency: configured
RTT, the toxic's wait, achieved p50/p90/mean/min/max, within ±10 %), summary.csv the
`rtt_<link>_p50_ms` columns, and a link outside ±10 % is flagged in the run's message.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from cachelab.k8s.images import image_reference
from cachelab.k8s.kube import K8sError
from cachelab.local.latency import PROBE_NAME, PROBES, TOLERANCE, Rtt, probes_for
from cachelab.network import Link
from cachelab.spec import Spec

CHART_KEYS = {"client_mw": "clientMw", "mw_server": "mwServer", "client_server": "clientServer"}
COMPONENT = "rtt-probe"  # app.kubernetes.io/component of the probe pods (no role's CPU)
SIDECAR = "toxiproxy"  # the chart's sidecar container
PROBE_BINARY = "/bin/rttprobe"
PROBE_DEADLINE_S = 120  # a probe pod's activeDeadlineSeconds


class ProbeError(K8sError):
    """A probe pod could not time its link (names the pod and what it printed)."""


def links_values(spec: Spec) -> dict[str, Any] | None:
    """The chart's `links` values of a point (None: no RTT, no sidecar, the chart's default)."""
    links = spec.links()
    if not links:
        return None
    return {
        "rttMs": {CHART_KEYS[link.name]: link.rtt_ms for link in links},
        "jitterMs": {CHART_KEYS[link.name]: link.jitter_ms for link in links},
    }


@dataclass(frozen=True)
class Target:
    """One link instance: the pod whose sidecar ends it, at the address the probe dials."""

    link: Link
    pod: str
    address: str  # pod IP:port, the port the Service targets (the sidecar's)


@dataclass(frozen=True)
class ProbePod:
    """One probe pod: on `pool`, labelled as `role` (so the release's NetworkPolicies hold it
    as they hold that role's pods), timing round trips to each target."""

    name: str
    role: str  # loadgen or middleware
    pool: str
    targets: tuple[Target, ...]


def probe_pods(
    spec: Spec, release: str, middlewares: dict[str, str], servers: dict[str, str]
) -> list[ProbePod]:
    """The probe pods of a point: `middlewares` and `servers` map pod names to their
    addresses (IP:port). One pod per link, each timing every instance of it."""
    links = {link.name: link for link in spec.links()}
    hosts = spec.topology.hosts
    pods = []
    if "client_mw" in links:
        targets = tuple(Target(links["client_mw"], p, a) for p, a in middlewares.items())
        pods.append(ProbePod(f"{release}-rtt-client-mw", "loadgen", hosts.client, targets))
    if "client_server" in links:
        targets = tuple(Target(links["client_server"], p, a) for p, a in servers.items())
        pods.append(ProbePod(f"{release}-rtt-client-server", "loadgen", hosts.client, targets))
    if "mw_server" in links:
        targets = tuple(Target(links["mw_server"], p, a) for p, a in servers.items())
        pods.append(ProbePod(f"{release}-rtt-mw-server", "middleware", hosts.middleware, targets))
    return pods


def probe_manifest(
    pod: ProbePod,
    spec: Spec,
    release: str,
    values: dict[str, Any],
    labels: dict[str, str],
) -> dict[str, Any]:
    """The probe pod's manifest. `values` are the release's (`helm get values --all`): its
    toxiproxy image (moved by global.imageRegistry), pools' label key and values, chart name,
    security contexts, tolerations and pull secrets; `labels` the run's."""
    toxiproxy = values["links"]["toxiproxy"]
    image = toxiproxy["image"]
    pools = values["nodePools"]
    label_value = pools["sizes"].get(pod.pool, {}).get("labelValue", pod.pool)
    probes = min(probes_for(t.link, PROBES) for t in pod.targets) if pod.targets else PROBES
    spec_pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": PROBE_DEADLINE_S,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            **values["podSecurityContext"],
            "runAsUser": 65534,
            "runAsGroup": 65534,
        },
        "nodeSelector": {pools["labelKey"]: str(label_value)},
        "containers": [
            {
                "name": "rttprobe",
                "image": image_reference(image, values),
                "imagePullPolicy": image.get("pullPolicy", "IfNotPresent"),
                "command": [
                    PROBE_BINARY,
                    "-protocol",
                    spec.workload.protocol,
                    "-n",
                    str(probes),
                    *(t.address for t in pod.targets),
                ],
                "resources": toxiproxy["resources"],
                "securityContext": values["containerSecurityContext"],
            }
        ],
    }
    if values.get("tolerations"):
        spec_pod["tolerations"] = values["tolerations"]
    if values.get("imagePullSecrets"):
        spec_pod["imagePullSecrets"] = values["imagePullSecrets"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod.name,
            "labels": {
                **labels,
                "app.kubernetes.io/name": values.get("nameOverride") or "testbed",
                "app.kubernetes.io/instance": release,
                "app.kubernetes.io/component": COMPONENT,
                "cachelab.dev/role": pod.role,
            },
        },
        "spec": spec_pod,
    }


# Sets both latency toxics of a sidecar (`kubectl exec ... sh -c SET_TOXICS set-toxics MS JITTER`),
# with the container's own PROXY and API_PORT (the chart's sidecar environment).
SET_TOXICS = (
    "for s in upstream downstream; do "
    "wget -q -O - --header 'Content-Type: application/json' "
    '--post-data "{\\"attributes\\":{\\"latency\\":$1,\\"jitter\\":$2}}" '
    '"http://127.0.0.1:$API_PORT/proxies/$PROXY/toxics/latency-$s" >/dev/null || exit 1; '
    "done"
)


def calibrated_one_way(link: Link, trial_min_ms: float) -> float:
    """Each direction's toxic after a trial through the link at its nominal half RTT: lowered by
    half of what the network and the proxy added beyond the toxics on the fastest round trip
    (as cachelab.local.latency.calibrate_links), so no round trip is faster than the RTT."""
    extra_ms = trial_min_ms - link.rtt_ms - link.jitter_ms
    return max(0.0, link.one_way_ms - extra_ms / 2)


def records(pod: ProbePod, log: str, toxic_one_way_ms: float | None = None) -> list[dict[str, Any]]:
    """One record per target from the probe's output (one JSON line per address), in the
    local runner's layout (`toxic_one_way_ms`: what each direction's toxic waited, default
    half the RTT); ProbeError when a target has no samples."""
    by_address: dict[str, dict[str, Any]] = {}
    for line in log.splitlines():
        if line.startswith("{"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            by_address[str(entry.get("addr"))] = entry
    found = []
    for target in pod.targets:
        entry = by_address.get(target.address)
        if entry is None or not entry.get("samples_ms"):
            why = entry.get("error") if entry else "no result"
            raise ProbeError(f"{pod.name}: {target.pod} ({target.address}): {why}")
        achieved = Rtt.of([float(s) for s in entry["samples_ms"]])
        link = target.link
        within = None
        if link.rtt_ms > 0:
            within = abs(achieved.p50_ms - link.rtt_ms) <= TOLERANCE * link.rtt_ms
        found.append(
            {
                "proxy": f"{target.pod}/{SIDECAR}",
                "link": link.name,
                "listen": target.address,
                "from": pod.name,
                "rtt_ms": link.rtt_ms,
                "jitter_ms": link.jitter_ms,
                "source": link.source,
                "toxic_one_way_ms": round(
                    link.one_way_ms if toxic_one_way_ms is None else toxic_one_way_ms, 4
                ),
                "achieved": asdict(achieved),
                "within_10pct": within,
            }
        )
    return found


def probe_word(spec: Spec) -> str:
    return PROBE_NAME[spec.workload.protocol]
