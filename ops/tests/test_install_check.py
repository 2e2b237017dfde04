"""The install check of `make test`: every command the project calls is installed by the project
(install-debs.sh, k8s-tools.sh, the venv) or is on every new machine; the shell reader finds the
commands of tricky lines and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.devtools.install_check import (
    INSTALLED_BY,
    check,
    main,
    makefile_shell,
    python_commands,
    shell_commands,
)
from cachelab.paths import repo_root

# (shell code, the commands it calls)
SHELL_CASES = [
    ("cat a | grep -v b | sort -u > out", ["cat", "grep", "sort"]),
    ('home="$(dirname "$(readlink -f "$0")")"', ["dirname", "readlink"]),
    ("v=`uname -r`; echo $v", ["uname"]),
    ("sudo -u root apt-get install -y x", ["sudo", "apt-get"]),
    ("$sudo systemctl stop memcached || true", ["systemctl"]),
    ("GOBIN=/tmp CGO_ENABLED=0 go build ./...", ["go"]),
    ("cat <<EOF\nfrobnicate --now\nEOF\nls", ["cat", "ls"]),
    ("python3 - <<'PY'\nimport frobnicate\nPY\nmake x", ["python3", "make"]),
    ("\tcat <<-END\n\tfrobnicate\n\tEND\nwc -l f", ["cat", "wc"]),
    ('read -r a <<< "$x"; date', ["date"]),
    ("up() { helper; }\nhelper() { ls; }\nup", ["ls"]),
    ("ip netns exec ns1 ping -c 1 10.0.0.1", ["ip", "ping"]),
    ('nsenter --net="/run/netns/n" -- tc qdisc show', ["nsenter", "tc"]),
    ("env CILIUM_SOCK=/s containerd --config c", ["env", "containerd"]),
    ("timeout -s KILL 5 nc -z 127.0.0.1 1; nice -n 19 make x", ["timeout", "nc", "nice", "make"]),
    ("xargs -I {} rm {}", ["xargs", "rm"]),
    ("sh -c 'mount --bind a b && exec \"$@\"' agent", ["sh", "mount"]),
    ("trap 'rm -rf \"$scratch\"' EXIT", ["rm"]),
    ("find /x -name procs -exec cat {} +", ["find", "cat"]),
    (
        'for b in conntrack runc; do command -v "$b" >/dev/null || exit 1; done',
        ["conntrack", "runc"],
    ),
    ("command -v go >/dev/null || exit 1", ["go"]),
    ('case "$1" in\n  a | b) memcached -d ;;\n  *) exit 2 ;;\nesac', ["memcached"]),
    ('[[ -x "$bin/a" && -f b ]] && touch c', ["touch"]),
    ("for ((i = 0; i < 3; i++)); do sleep 1; done", ["sleep"]),
    ("while read -r a; do :; done < <(awk '{print}' f)", ["awk"]),
    ('tools=(pause coredns)\nc+=("$(command -v javac)")', ["javac"]),
    ('"$bin/kubectl" get pods; ./scripts/x.sh; $HELM repo add; "${run[@]}" tc', []),
    ("ls  # frobnicate in a comment", ["ls"]),
    ("if ! flock -n 9; then echo busy; fi", ["flock"]),
    ('exec 9>"$dir/.lock"; exec 2>&1', []),
    (
        'start() { local n="$1"; shift; setsid "$@" >"$n.log" & }\nstart db etcd --data-dir d',
        ["setsid", "etcd"],
    ),
    (
        'wait_for() { local s="$1" w="$2"; shift 2; "$@" && return 0; }\n'
        "wait_for 30 api ctr version",
        ["ctr"],
    ),
]


@pytest.mark.parametrize(("code", "commands"), SHELL_CASES, ids=[c[0][:40] for c in SHELL_CASES])
def test_shell_reader_finds_the_commands_of_a_line(code: str, commands: list[str]) -> None:
    assert sorted(command for command, _ in shell_commands(code)) == sorted(commands)


def test_shell_reader_gives_the_line_of_each_call() -> None:
    code = "# a script\nx=$(\n  hostname)\ncat <<EOF\nbody\nEOF\nsort \\\n  -u f | uniq\n"
    assert shell_commands(code) == [("hostname", 3), ("cat", 4), ("sort", 7), ("uniq", 8)]


def test_functions_of_a_sourced_file_are_not_commands() -> None:
    library = 'cache_dir() { echo "$HOME/.cache"; }'
    assert shell_commands('d="$(cache_dir)/tools"; ls "$d"', [library]) == [("ls", 1)]
    assert shell_commands('d="$(cache_dir)/tools"') == [("cache_dir", 1)]


def test_makefile_recipes_are_read_with_their_variables_expanded() -> None:
    makefile = (
        "JDK = $(shell scripts/find-jdk.sh || javac -version)\n"
        "MVN = JAVA_HOME=$(JDK) mvn -B\n"
        "build: ## Build.\n"
        "\t@$(MVN) package\n"
        "\t@echo $$(date) && $(VENV)/bin/ruff check .\n"
    )
    shell = makefile_shell(makefile)
    assert len(shell.splitlines()) == len(makefile.splitlines())
    assert shell_commands(shell) == [("javac", 1), ("mvn", 4), ("date", 5)]


def test_python_reader_finds_subprocess_calls_wrappers_and_lookups() -> None:
    code = (
        "import shutil, subprocess\n"
        "def run(argv: list[str]) -> None:\n"
        "    subprocess.run(argv, check=True)\n"
        'run(["helm", "version"])\n'
        'subprocess.Popen(["memcached", "-p", "0"])\n'
        'if shutil.which("tc") is None: pass\n'
        'cmd = ["redis-benchmark", "-q"]\n'
        'kubectl_binary: str = "kubectl"\n'
        'for tool in ("nutcracker", "memcaslap"):\n'
        "    shutil.which(tool)\n"
        'def shot(browser: str = "chromium") -> None: ...\n'
        'subprocess.run([sys.executable, "-c", "pass"])\n'
        'main(["run", "spec.yaml"])\n'
    )
    assert sorted(python_commands(code), key=lambda c: c[1]) == [
        ("helm", 4),
        ("memcached", 5),
        ("tc", 6),
        ("redis-benchmark", 7),
        ("kubectl", 8),
        ("nutcracker", 9),
        ("memcaslap", 9),
        ("chromium", 11),
    ]


def test_the_repository_installs_every_command_it_calls() -> None:
    report = check(repo_root())
    assert [f"{call}: {why}" for call, why in report.uncovered] == []
    # the scripts' own tools: Debian packages, k8s-tools builds and the machine's
    for command in ("conntrack", "etcd", "containerd", "kubectl", "mvn", "go", "git"):
        assert report.commands[command] == INSTALLED_BY[command]
    assert report.summary().startswith(f"install check: {len(report.commands)} commands, each")


def _fake_repository(root: Path, packages: list[str]) -> Path:
    """A repository with one script and an install-debs.sh that installs PACKAGES."""
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "up.sh").write_text(
        "#!/usr/bin/env bash\nset -euo pipefail\nfrobnicate --now\nconntrack -F\nmkdir -p x\n"
    )
    (root / "scripts" / "install-debs.sh").write_text(
        "#!/usr/bin/env bash\n"
        '[[ "$1 $2" == "--list all" ]] || exit 2\n'
        f"printf '%s\\n' {' '.join(packages)}\n"
    )
    return root


def test_a_command_that_nothing_installs_fails_with_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _fake_repository(tmp_path, ["memcached", "curl"])
    assert main([str(root)]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "scripts/up.sh:4: conntrack: deb:conntrack, but scripts/install-debs.sh --list all does"
        " not print conntrack",
        "scripts/up.sh:3: frobnicate: installed by nothing: add it to INSTALLED_BY in"
        " install_check.py",
    ]
    assert "2 command(s) that nothing in the project installs (conntrack, frobnicate)" in err


def test_the_check_passes_once_the_package_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _fake_repository(tmp_path, ["conntrack"])
    script = root / "scripts" / "up.sh"
    script.write_text(script.read_text().replace("frobnicate --now\n", ""))
    assert main([str(root)]) == 0
    assert capsys.readouterr().out == (
        "install check: 2 commands, each installed by a Debian package of"
        " scripts/install-debs.sh (1) or the machine (1)\n"
    )
