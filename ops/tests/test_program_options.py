"""The programs' exported option descriptions and the tables rendered from them."""

from __future__ import annotations

import re

from cachelab import program_options as options
from cachelab.paths import repo_root


def test_the_rendered_tables_are_current() -> None:
    assert options.stale_tables(repo_root()) == [], "`make options` renders them again"


def test_the_description_reads_as_the_help_states_it() -> None:
    mw = options.middleware()
    assert mw["--event-loops"].range_text == "0..64"
    assert mw["--replication"].range_text == "1..servers"
    assert mw["--buffer-budget-bytes"].range_text == "0 or >= 1048576"
    assert mw.bounds("-t") == (1, 1024)
    for option in mw.options:
        if option.range_text:
            assert option.range_text in option.description, option.name


def test_a_table_replaces_only_what_lies_between_its_markers() -> None:
    text = "before\n<!-- t:begin (make options) -->\nold\n<!-- t:end -->\nafter\n"
    assert options.rendered(text, "t", "new\n") == (
        "before\n<!-- t:begin (make options) -->\nnew\n<!-- t:end -->\nafter\n"
    )


def test_the_loadgens_zipf_exponent_is_an_open_range() -> None:
    zipf = options.loadgen()["--key-zipf-exp"]
    assert (zipf.min, zipf.max, zipf.range_text) == (0, 5, "(0, 5)")
    assert zipf.range_text is not None and zipf.range_text in zipf.description


def _loadgen_rows() -> list[tuple[list[str], str, list[str]]]:
    """The option rows of loadgen/README.md (Options): names, meaning, backticked defaults."""
    text = (repo_root() / "loadgen" / "README.md").read_text()
    section = text[text.index("## Options") : text.index("\nRejected:")]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 3 and cells[0].startswith("`"):
            names = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", cells[0])
            rows.append((names, cells[1], re.findall(r"`([^`]*)`", cells[2])))
    return rows


def test_the_loadgen_readme_lists_every_option_with_its_default_and_range() -> None:
    loadgen = options.loadgen()
    rows = _loadgen_rows()
    listed = {name for names, _, _ in rows for name in names}
    assert {o.name for o in loadgen.options} <= listed
    assert {n for n in listed if n.startswith("--")} <= {o.name for o in loadgen.options}
    for names, meaning, defaults in rows:
        longs = [loadgen[n] for n in names if n.startswith("--")]
        if len(defaults) == len(longs):
            for option, stated in zip(longs, defaults, strict=True):
                if option.default is not None:
                    assert stated == option.default, option.name
        for option in longs:
            if option.range_text:
                assert option.range_text in meaning, option.name
