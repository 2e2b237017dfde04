"""Which monitors a Prometheus (monitoring.coreos.com/v1) selects, as the operator decides it."""

from __future__ import annotations

from typing import Any

import pytest

from cachelab.k8s.monitors import matches, unselected


def _expr(operator: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "r", "operator": operator, "values": list(values)}]}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (None, {"release": "kps"}, False),  # an absent selector selects nothing
        ({}, {}, True),  # an empty one everything
        ({"matchLabels": {"release": "kps"}}, {"release": "kps", "a": "b"}, True),
        ({"matchLabels": {"release": "kps"}}, {"release": "testbed"}, False),
        (_expr("In", "x"), {"r": "x"}, True),
        (_expr("In", "x"), {"r": "y"}, False),
        (_expr("NotIn", "x"), {"r": "y"}, True),
        (_expr("NotIn", "x"), {"r": "x"}, False),
        (_expr("Exists"), {}, False),
        (_expr("DoesNotExist"), {}, True),
    ],
)  # fmt: skip
def test_label_selectors(
    selector: dict[str, Any] | None, labels: dict[str, str], expected: bool
) -> None:
    assert matches(selector, labels) is expected


def _object(namespace: str, name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"namespace": namespace, "name": name, "labels": labels}}


PROMETHEUS = {
    "metadata": {"namespace": "monitoring", "name": "kps"},
    "spec": {
        "serviceMonitorSelector": {"matchLabels": {"release": "kps"}},
        "serviceMonitorNamespaceSelector": {},
        "podMonitorSelector": {"matchLabels": {"release": "kps"}},
        # no podMonitorNamespaceSelector: PodMonitors of its own namespace only
    },
}


def test_a_mislabelled_monitor_is_reported_and_a_labelled_one_is_not() -> None:
    objects = {
        "servicemonitors": [
            _object("exp", "testbed-middleware", release="kps"),
            _object("exp", "other-middleware", release="other"),
        ],
        "podmonitors": [
            _object("monitoring", "node", release="kps"),
            _object("exp", "benchmark-loadgen", release="kps"),
        ],
        "prometheusrules": [_object("exp", "rules", release="kps")],
    }
    found = unselected([PROMETHEUS], objects, {"exp": {}, "monitoring": {}})
    assert [(u.kind, u.name) for u in found] == [
        ("servicemonitors", "other-middleware"),
        ("podmonitors", "benchmark-loadgen"),  # another namespace, no namespace selector
        ("prometheusrules", "rules"),  # no ruleSelector: no rule is selected
    ]
    assert found[0].line() == (
        "servicemonitors exp/other-middleware: no Prometheus selects it "
        "(Prometheus monitoring/kps wants release=kps)"
    )
