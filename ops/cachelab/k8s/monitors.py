"""Which ServiceMonitors, PodMonitors and PrometheusRules the Prometheus objects of a cluster
select, as the Prometheus Operator decides it: a monitor is scraped only if some `Prometheus`
selects it by its labels (`serviceMonitorSelector`, `podMonitorSelector`, `ruleSelector`) and by
its namespace's labels (`...NamespaceSelector`: absent means the Prometheus's own namespace only,
`{}` every namespace). A missing `release: <release name>` label, the selector of
kube-prometheus-stack's Prometheus, is the most common reason a monitor is silently never
scraped; `make monitoring-check` (`python -m cachelab.k8s.monitors`) lists every such object.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

# kind (plural, as kubectl names it) -> (label selector field, namespace selector field)
SELECTORS = {
    "servicemonitors": ("serviceMonitorSelector", "serviceMonitorNamespaceSelector"),
    "podmonitors": ("podMonitorSelector", "podMonitorNamespaceSelector"),
    "prometheusrules": ("ruleSelector", "ruleNamespaceSelector"),
}


def matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A Kubernetes label selector against labels; None (an absent selector) matches nothing,
    `{}` everything."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


@dataclass(frozen=True)
class Unselected:
    """A monitor or rule that no Prometheus selects, and what the Prometheuses ask for."""

    kind: str
    namespace: str
    name: str
    wanted: str

    def line(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}: no Prometheus selects it ({self.wanted})"


def _describe(prometheus: dict[str, Any], field: str) -> str:
    meta = prometheus["metadata"]
    selector = prometheus["spec"].get(field)
    labels = (selector or {}).get("matchLabels") or {}
    shown = ",".join(f"{k}={v}" for k, v in labels.items()) if labels else json.dumps(selector)
    return f"Prometheus {meta['namespace']}/{meta['name']} wants {shown}"


def unselected(
    prometheuses: list[dict[str, Any]],
    objects: dict[str, list[dict[str, Any]]],
    namespace_labels: dict[str, dict[str, str]],
) -> list[Unselected]:
    """The objects (kind -> items, as `kubectl get -o json` lists them) that no Prometheus
    selects. `namespace_labels` holds the labels of every namespace."""
    found = []
    for kind, items in objects.items():
        field, namespace_field = SELECTORS[kind]
        for item in items:
            meta = item["metadata"]
            namespace = meta["namespace"]
            labels = meta.get("labels") or {}
            selected = False
            for prometheus in prometheuses:
                spec = prometheus["spec"]
                if namespace_field in spec:
                    in_namespace = matches(
                        spec[namespace_field], namespace_labels.get(namespace, {})
                    )
                else:
                    in_namespace = namespace == prometheus["metadata"]["namespace"]
                if in_namespace and matches(spec.get(field), labels):
                    selected = True
                    break
            if not selected:
                wanted = "; ".join(_describe(p, field) for p in prometheuses) or "no Prometheus"
                found.append(Unselected(kind, namespace, meta["name"], wanted))
    return found


def _kubectl_items(*args: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        ["kubectl", "get", *args, "-o", "json"], capture_output=True, text=True, check=True
    ).stdout
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def main() -> int:
    """Print every ServiceMonitor, PodMonitor and PrometheusRule of the current cluster that no
    Prometheus selects; exit 1 if there is one."""
    try:
        prometheuses = _kubectl_items("prometheuses", "-A")
        objects = {kind: _kubectl_items(kind, "-A") for kind in SELECTORS}
        namespaces = {
            n["metadata"]["name"]: n["metadata"].get("labels") or {}
            for n in _kubectl_items("namespaces")
        }
    except subprocess.CalledProcessError as error:
        print(f"error: {' '.join(error.cmd)}: {error.stderr.strip()}", file=sys.stderr)
        return 2
    problems = unselected(prometheuses, objects, namespaces)
    for problem in problems:
        print(problem.line())
    total = sum(len(items) for items in objects.values())
    print(f"{total - len(problems)} of {total} monitors and rules selected by a Prometheus")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
