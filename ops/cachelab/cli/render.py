"""`cachelab render SPEC --point N`: one point of a spec as a kustomize overlay (the overlay
itself is cachelab.k8s.render's)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from cachelab.cli.arguments import Subparsers
from cachelab.cli.common import error, spec_hint
from cachelab.k8s import render as k8s_render
from cachelab.spec import SpecError, load_spec


def add_parser(sub: Subparsers) -> None:
    render = sub.add_parser(
        "render",
        help="write one point of a spec as a kustomize overlay (kubectl apply -k)",
        description=k8s_render.DESCRIPTION,
    )
    render.set_defaults(handler=cmd_render)
    k8s_render.add_arguments(render)


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    from cachelab.paths import repo_root

    try:
        spec = load_spec(args.spec)
        out = args.out or k8s_render.default_out(spec, args.point)
        files = k8s_render.overlay_files(spec, args, out, repo_root())
        k8s_render.write_overlay(files, out)
    except SpecError as problem:
        return error(console, f"{problem}{spec_hint(args.spec)}")
    except k8s_render.RenderError as problem:
        return error(console, str(problem))
    except OSError as problem:
        return error(console, f"--out {out}: cannot write ({problem.strerror or problem})")
    console.print(f"overlay: [bold]{escape(str(out))}[/] ({', '.join(files)})", highlight=False)
    return 0
