"""`cachelab render SPEC --point N`: one point of a spec as a kustomize overlay of manifests/base.

The overlay runs unmodified with `kubectl apply -k` next to a `testbed` release installed from
its own `testbed-values.yaml`, on any cluster whose nodes carry the pools' `agentpool` labels. It
holds three files:

- `kustomization.yaml`: the components and the benchmark-config literals of the point, made by
  the same functions as a `cachelab run --target k8s` run (cachelab.k8s.plan), so the loadgen
  flags are those of a local run (cachelab.loadgen_args); its header names the command that
  rendered it;
- `testbed-values.yaml`: the release's values for the point (plan.release_values);
- `point-spec.yaml`: the point as a one-point spec, which the overlay ships as the ConfigMap
  `cachelab-point` so that `cachelab collect` can write a results folder of the Jobs' output.

The shipped overlays (manifests/overlays/*) are rendered by this module, and a test renders each
again from the command in its header and compares: the spec is the one source of truth.
"""

from __future__ import annotations

import argparse
import shlex
import textwrap
from pathlib import Path
from typing import Any

import yaml

from cachelab.k8s import plan
from cachelab.spec import Point, Spec, load_spec

RELEASE = "testbed"  # the release the overlays' Jobs target (MIDDLEWARE_HOST testbed-middleware)
POINT_SPEC_FILE = "point-spec.yaml"
POINT_CONFIGMAP = "cachelab-point"  # holds spec.yaml, read by `cachelab collect`
POINT_ROLE_LABEL = ("cachelab.dev/role", "point-spec")
COMMAND_PREFIX = "# Rendered by: cachelab render "
WIDTH = 100


class _Dumper(yaml.SafeDumper):
    """YAML as the hand-written manifests look: lists indented under their key, multi-line
    strings (the JSON patches) as literal blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=1000, allow_unicode=True)


class RenderError(ValueError):
    """A render request that cannot be met (names the option)."""


DESCRIPTION = (
    "Write one point of a spec as an overlay of manifests/base: kustomization.yaml (the point's "
    "loadgen flags and components), testbed-values.yaml (the release) and point-spec.yaml (for "
    "cachelab collect). `cachelab validate SPEC` counts the points."
)


def add_arguments(render: argparse.ArgumentParser) -> None:
    """The options of `cachelab render`, which the overlays' headers repeat."""
    render.add_argument("spec", type=Path, help="experiment spec (YAML)")
    render.add_argument(
        "--point",
        type=int,
        required=True,
        help="point index: p<N> of the results folders, the sweep's cartesian product with the "
        "last axis varying fastest",
    )
    render.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder the files are written into (default: ./<spec name>-p<N>)",
    )
    render.add_argument(
        "--loadgen",
        choices=plan.RENDER_LOADGENS,
        default="cachelab",
        help="cachelab: the project's loadgen image; memtier: memtier_benchmark, for clusters "
        "that can pull it; locust: locust master and workers",
    )
    render.add_argument(
        "--bandwidth",
        choices=plan.BANDWIDTH_PROFILES,
        default="asl2017",
        help="client egress annotation profile",
    )


def repo_relative(path: Path, root: Path) -> str:
    """`path` relative to the checkout when inside it (as the header shows it), else absolute."""
    absolute = path.absolute()
    try:
        return str(absolute.relative_to(root.absolute()))
    except ValueError:
        return str(absolute)


def default_out(spec: Spec, point: int) -> Path:
    return Path(f"{spec.name}-p{point}")


def choose_point(spec: Spec, index: int) -> Point:
    points = spec.points()
    if not 0 <= index < len(points):
        raise RenderError(f"--point {index}: {spec.name} has points 0..{len(points) - 1}")
    return points[index]


def point_spec(point: Point) -> Spec:
    """The point as a spec of its own: each swept axis keeps only the point's value (so the
    summary and report keep their columns), one repetition."""
    data = point.spec.model_dump(mode="json")
    data["sweep"] = {axis: [value] for axis, value in point.values.items()}
    data["run"]["repetitions"] = 1
    return Spec.model_validate(data)


def command_line(args: argparse.Namespace, out: Path, root: Path) -> str:
    """The `cachelab render` arguments that make this overlay again (written in its header)."""
    words = [repo_relative(args.spec, root), "--point", str(args.point)]
    words += ["--out", repo_relative(out, root)]
    if args.loadgen != "cachelab":
        words += ["--loadgen", args.loadgen]
    if args.bandwidth != "asl2017":
        words += ["--bandwidth", args.bandwidth]
    return shlex.join(words)


def parse_command(kustomization: str) -> list[str] | None:
    """The render arguments in an overlay's header, or None if it has none."""
    for line in kustomization.splitlines():
        if line.startswith(COMMAND_PREFIX):
            return shlex.split(line[len(COMMAND_PREFIX) :])
    return None


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 2, initial_indent="# ", subsequent_indent="# ")


def overlay_files(spec: Spec, args: argparse.Namespace, out: Path, root: Path) -> dict[str, str]:
    """File name -> text of the overlay of `args.point`, to be written in `out`. The paths to
    manifests/ are relative to `out` (kustomize refuses absolute ones)."""
    point = choose_point(spec, args.point)
    target = plan.Target(release=RELEASE, loadgen=args.loadgen, bandwidth=args.bandwidth)
    try:
        plan.check(point.spec)
        plan.job_config(point.spec, target)
    except plan.PlanError as error:
        raise RenderError(f"{point.label()}: {error}") from None
    shown_out = repo_relative(out, root)
    install = (
        f"helm upgrade --install {RELEASE} charts/testbed -f {shown_out}/testbed-values.yaml --wait"
    )
    labels = {"cachelab.dev/experiment": spec.name, "cachelab.dev/run": f"p{point.index}-r0"}
    doc = yaml.safe_load(
        plan.kustomization(point.spec, target, root / "manifests", out.absolute(), labels)
    )
    (config,) = doc["configMapGenerator"]
    config["literals"].append(f"RELEASE_HINT={install}")
    role_key, role_value = POINT_ROLE_LABEL
    doc["configMapGenerator"].append(
        {
            "name": POINT_CONFIGMAP,
            "files": [f"spec.yaml={POINT_SPEC_FILE}"],
            "options": {"disableNameSuffixHash": True, "labels": {role_key: role_value}},
        }
    )
    header = [
        *_comment(f"{point.label()} of {spec.name}: {spec.description or spec.name}"),
        *(_comment(f"Seeds: {', '.join(spec.seeds)}.") if spec.seeds else []),
        COMMAND_PREFIX + command_line(args, out, root),
        "# Change the spec and render again: a test compares this folder with what the spec",
        "# renders. Run it (docs/kubernetes.md): install the release, apply, release, collect:",
        f"#   {install}",
        f"#   kubectl apply -k {shown_out}",
        "#   kubectl wait --for=condition=complete job/preload --timeout=10m",
        '#   kubectl patch job/benchmark --type=merge -p \'{"spec":{"suspend":false}}\'',
        "#   kubectl wait --for=condition=complete job/benchmark --timeout=30m",
        "#   cachelab collect",
    ]
    kustomization = "\n".join(header) + "\n" + dump(doc)
    values = (
        f"# Release values of {point.label()} of {spec.name} (cachelab render; see "
        "kustomization.yaml).\n# Add your cluster's values file after this one (images, pools' "
        "label values, sizes).\n" + dump(plan.release_values(point.spec, target))
    )
    one_point = (
        f"# {point.label()} of {spec.name} as a one-point spec (cachelab render), read back by "
        "cachelab collect.\n" + dump(point_spec(point).model_dump(mode="json"))
    )
    return {
        "kustomization.yaml": kustomization,
        "testbed-values.yaml": values,
        POINT_SPEC_FILE: one_point,
    }


def write_overlay(files: dict[str, str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text)


def stale_files(folder: Path, root: Path) -> list[str]:
    """How the overlay in `folder` differs from what the command in its header renders now
    (empty: it is up to date). The paths in the header are relative to `root`."""
    kustomization = folder / "kustomization.yaml"
    if not kustomization.is_file():
        return [f"{folder}: no kustomization.yaml"]
    words = parse_command(kustomization.read_text())
    if words is None:
        return [f"{kustomization}: no `{COMMAND_PREFIX[2:].strip()}` line in its header"]
    parser = argparse.ArgumentParser(prog="cachelab render", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(words)
    args.spec = root / args.spec
    out = root / args.out
    if out.resolve() != folder.resolve():
        return [f"{kustomization}: its command writes --out {args.out}, not this folder"]
    files = overlay_files(load_spec(args.spec), args, out, root)
    problems = [
        f"{folder / name}: differs from what {args.spec.name} renders"
        for name, text in files.items()
        if not (folder / name).is_file() or (folder / name).read_text() != text
    ]
    problems += [
        f"{path}: not rendered (the spec renders {', '.join(files)})"
        for path in sorted(folder.iterdir())
        if path.name not in files
    ]
    return problems
