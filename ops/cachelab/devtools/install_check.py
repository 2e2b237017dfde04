"""Every command the project calls is installed by the project, or is on every new machine.

CI runs on a brand-new machine: a command that a developer installed by hand passes on the
developer's machine and fails there. This check reads the commands that the project's own code
calls and fails (status 1, one `path:line: command: why` line per call) on any command that
INSTALLED_BY does not map, or maps to an installer that does not install it.

Where the commands come from:

- shell: every shell script under scripts/ (by suffix `.sh` or a `#!` line naming a shell),
  `.ci/run`, the Makefile's recipes and its `$(shell ...)` calls (make variables expanded);
- Python: the modules under ops/cachelab, ops/tests and scripts/ (subprocess calls, project wrappers
  of them, `shutil.which("x")`, `cmd = ["x", ...]`, and `x_binary: str = "x"` defaults).

Manifests and charts are left out: their scripts run inside the images, which carry their own
tools. The shell reader is a tokenizer, not bash: it reads the first word of every simple command
(after `sudo`, `env`, `nsenter ... --`, `ip netns exec NAME`, ... and the script's own functions
that run their arguments), `command -v x`, and `command -v "$v"` for the words of `for v in ...`.
It skips comments, heredoc bodies, shell keywords and builtins, functions defined in the same
file, and words that are not bare names: a word with a `/` is a path (a file of the project or a
tool in $TOOLS_DIR) and a word that starts with `$` or a quote is not known until run time.

How a command is installed (INSTALLED_BY), and what verifies it:

- `deb:PACKAGE` a Debian package that `scripts/install-debs.sh --list all` prints;
- `k8s-tools`   a binary that scripts/k8s-tools.sh builds (its name occurs in the script);
- `venv`        a console script pip installs into .venv from ops/pyproject.toml (named there);
- `machine`     on every new machine of the project's kind (Debian 12 with Go, JDKs, Python,
                Node, make and git) before anything of the project runs: MACHINE says why;
- `optional`    installed by nothing on purpose: every caller looks for it and does without
                (OPTIONAL says how); the summary line names these.

Usage: python -m cachelab.devtools.install_check [ROOT]   (ROOT defaults to the git top level)
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cachelab.devtools.prose_lint import git_root


def _each(names: str, how: str) -> dict[str, str]:
    """NAMES (space-separated) -> HOW."""
    return dict.fromkeys(names.split(), how)


# What the project installs, command -> installer (the package from `dpkg -S $(command -v X)`).
PROJECT_INSTALLS: dict[str, str] = {
    # install-debs.sh run: the servers under test, Maven, nc for the chart's helper image
    **_each("memcached", "deb:memcached"),
    **_each("redis-server", "deb:redis-server"),
    # redis-cli and redis-benchmark are redis-tools', a dependency of redis-server
    **_each("redis-cli redis-benchmark", "deb:redis-server"),
    **_each("mvn", "deb:maven"),
    **_each("nc", "deb:netcat-openbsd"),
    # scripts/toxiproxy.sh applies its patch to the emulator's source
    **_each("patch", "deb:patch"),
    # install-debs.sh test and bench: the peers, the C compiler, Prometheus, Chromium
    **_each("nutcracker", "deb:nutcracker"),
    **_each("memcaslap", "deb:libmemcached-tools"),
    **_each("gcc", "deb:gcc"),
    **_each("promtool", "deb:prometheus"),
    **_each("chromium", "deb:chromium"),
    # install-debs.sh k8s: the real local cluster and its images
    **_each("etcd", "deb:etcd-server"),
    **_each("containerd ctr", "deb:containerd"),
    **_each("runc", "deb:runc"),
    **_each("iptables ip6tables iptables-save ip6tables-save iptables-restore", "deb:iptables"),
    **_each("ipset", "deb:ipset"),
    **_each("conntrack", "deb:conntrack"),
    **_each("openssl", "deb:openssl"),
    **_each("umoci", "deb:umoci"),
    **_each("skopeo", "deb:skopeo"),
    **_each("docker-registry", "deb:docker-registry"),
    **_each("busybox", "deb:busybox-static"),
    # install-debs.sh cilium: the agent's health probe
    **_each("curl", "deb:curl"),
    # scripts/k8s-tools.sh, from Go modules
    **_each(
        "helm kwok kwokctl kube-apiserver kube-controller-manager kube-scheduler kubelet"
        " kube-proxy kubectl coredns prometheus prometheus-operator prometheus-config-reloader"
        " kube-router cilium-agent cilium-cni",
        "k8s-tools",
    ),
    # pip, from ops/pyproject.toml
    **_each("ruff mypy pytest locust", "venv"),
}

# What every new machine of the project's kind has before anything of the project runs (Debian
# 12 with its required and standard tools, git, make, Go, OpenJDK 17 beside a JDK >= 21, Python
# 3.11, linux-perf): command -> what it comes with. A command that the project also installs
# (gcc, curl, openssl, maven) is the project's, above.
MACHINE: dict[str, str] = {
    **_each(
        "basename cat chmod chown cp cut date dd df dirname du echo env head id install ln ls"
        " md5sum mkdir mktemp mv nice nohup nproc printf pwd readlink realpath rm rmdir seq"
        " sha256sum sleep sort stat stdbuf tail tee test timeout touch tr true uname uniq wc yes",
        "coreutils",
    ),
    **_each("awk", "mawk"),
    **_each(
        "flock findmnt kill lsblk mount mountpoint nsenter setsid umount unshare", "util-linux"
    ),
    **_each("ip tc bridge ss", "iproute2"),
    **_each("ps pgrep pkill sysctl free top", "procps"),
    **_each("find xargs", "findutils"),
    **_each("grep", "grep"),
    **_each("sed", "sed"),
    **_each("tar", "tar"),
    **_each("gzip gunzip zcat", "gzip"),
    **_each("ldd getent getconf", "libc-bin"),
    **_each("dpkg dpkg-query dpkg-deb", "dpkg"),
    **_each("apt-get apt-cache", "apt"),
    **_each("systemctl", "systemd"),
    **_each("sh dash", "dash"),
    **_each("bash", "bash"),
    **_each("git", "git"),
    **_each("make", "make"),
    **_each("perf", "linux-perf"),
    **_each("go", "the Go toolchain"),
    **_each("java javac jlink jcmd jdeps", "OpenJDK 17 (find-jdk.sh picks a JDK >= 21)"),
    **_each("python3 python3.11", "python3"),
}

# Installed by nothing on purpose: every caller looks for the command and does without it.
OPTIONAL: dict[str, str] = {
    "sudo": "install-debs.sh uses it only when not root and it is there (CI runs as root)",
}

INSTALLED_BY: dict[str, str] = {
    **_each(" ".join(OPTIONAL), "optional"),
    **_each(" ".join(MACHINE), "machine"),
    **PROJECT_INSTALLS,
}

# ---------------------------------------------------------------------------------------- shell


def _names(names: str) -> frozenset[str]:
    """The space-separated NAMES as a set."""
    return frozenset(names.split())


SHELL_KEYWORDS = _names(
    "if then else elif fi case esac for select while until do done in function time ! { } [[ ]]"
    " coproc"
)
SHELL_BUILTINS = _names(
    ". : [ alias bg bind break builtin caller cd command compgen complete continue declare dirs"
    " disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill"
    " let local logout mapfile popd printf pushd pwd read readarray readonly return set shift"
    " shopt source suspend test times trap true type typeset ulimit umask unalias unset wait"
)
# Words after which the next word is again a command.
_LEADERS = _names("if then else elif do while until")
# Operators that end a simple command.
_SEPARATORS = frozenset({";", "&", "|", "||", "&&", "|&", "(", ")", ";;", ";&", ";;&"})
_REDIRECT = re.compile(r"\d*(?:<<<|<<-|<<|&>>|&>|>>|>&|<&|<>|>\||<|>)")
_OPERATOR = re.compile(r";;&|;;|;&|\|\||&&|\|&|[|&;()]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_ARRAY_START = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=$")
_COMMAND_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_WORD_END = frozenset(" \t\n|&;()<>")
_HEREDOC_WORD = re.compile(r"[ \t]*([^ \t\n|&;()<>]*)")
_PARAMETER = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9#?$!@*-])?")


@dataclass(frozen=True)
class Wrapper:
    """A command that runs the command after its options: which options take a value, how many
    operands come before that command, and whether `VAR=value` words may precede it."""

    options_with_value: frozenset[str] = frozenset()
    operands: int = 0
    assignments: bool = False


WRAPPERS: dict[str, Wrapper] = {
    "sudo": Wrapper(_names("-u -g -h -p -C -D -r -t -U -R -T"), assignments=True),
    "env": Wrapper(_names("-u -C -S --unset --chdir"), assignments=True),
    "nice": Wrapper(_names("-n --adjustment")),
    "timeout": Wrapper(_names("-s -k --signal --kill-after"), operands=1),
    "xargs": Wrapper(_names("-I -n -P -L -d -E -s -a")),
    "nsenter": Wrapper(_names("-t --target -S --setuid -G --setgid")),
    "unshare": Wrapper(_names("--propagation --setgroups -S -G -R -w --root --wd")),
    "setsid": Wrapper(),
    "stdbuf": Wrapper(_names("-i -o -e")),
    "exec": Wrapper(_names("-a")),
    "time": Wrapper(),
    "!": Wrapper(),
}
# The value of `$sudo` in the scripts that set it (`sudo` or nothing).
_SUDO_WORDS = frozenset({"$sudo", '"$sudo"', "${sudo}", '"${sudo}"'})


@dataclass(frozen=True)
class Token:
    """A shell word or operator, the line it starts on, and the code of the command
    substitutions (`$(...)`, backquotes, `<(...)`) and array literals inside a word."""

    kind: str  # "word", "op" or "newline"
    text: str
    line: int
    subs: tuple[tuple[Token, ...], ...] = ()


class ShellLexer:
    """Splits shell code into tokens; quotes, substitutions and `${...}` stay inside their word."""

    def __init__(self, text: str, line: int = 1) -> None:
        self.text = text
        self.pos = 0
        self.line = line
        self.heredocs: list[tuple[str, bool]] = []

    def tokens(self) -> list[Token]:
        """Every token of the text."""
        return self._tokens(until_paren=False)

    def _advance(self, n: int = 1) -> str:
        chunk = self.text[self.pos : self.pos + n]
        self.line += chunk.count("\n")
        self.pos += n
        return chunk

    def _at(self, prefix: str) -> bool:
        return self.text.startswith(prefix, self.pos)

    def _tokens(self, until_paren: bool) -> list[Token]:
        """Tokens up to the end, or (until_paren) up to an unmatched `)`, which is consumed."""
        out: list[Token] = []
        depth = 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in " \t":
                self._advance()
            elif self._at("\\\n"):
                self._advance(2)
            elif c == "\n":
                out.append(Token("newline", "\n", self.line))
                self._advance()
                self._skip_heredoc_bodies()
            elif c == "#":
                end = self.text.find("\n", self.pos)
                self._advance((len(self.text) if end < 0 else end) - self.pos)
            elif self._at("(("):
                line = self.line
                out.append(Token("word", self._balanced("(", ")"), line))
            elif c in "<>" and self._at(c + "("):
                line = self.line
                self._advance(2)
                out.append(Token("word", c + "(...)", line, (tuple(self._tokens(True)),)))
            elif redirect := self._redirect():
                out.append(redirect)
            elif match := _OPERATOR.match(self.text, self.pos):
                op = match.group()
                if op == ")" and until_paren and depth == 0:
                    self._advance()
                    return out
                depth += {"(": 1, ")": -1}.get(op, 0)
                out.append(Token("op", op, self.line))
                self._advance(len(op))
            else:
                out.append(self._word())
        return out

    def _redirect(self) -> Token | None:
        """A redirection operator (with its fd number); after `<<` it notes the heredoc, whose
        delimiter is the next word."""
        match = _REDIRECT.match(self.text, self.pos)
        if not match:
            return None
        op = match.group()
        token = Token("op", op, self.line)
        self._advance(len(op))
        if op.lstrip("0123456789") in ("<<", "<<-"):
            word = _HEREDOC_WORD.match(self.text, self.pos)
            delimiter = re.sub(r"[\"'\\]", "", word.group(1) if word else "")
            self.heredocs.append((delimiter, op.endswith("-")))
        return token

    def _skip_heredoc_bodies(self) -> None:
        for delimiter, strip_tabs in self.heredocs:
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end + 1
                line = self.text[self.pos : end].rstrip("\n")
                self._advance(end - self.pos)
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self.heredocs = []

    def _word(self) -> Token:
        line = self.line
        buf: list[str] = []
        subs: list[tuple[Token, ...]] = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "(" and _ARRAY_START.match("".join(buf)):
                self._advance()
                for element in self._tokens(until_paren=True):  # an array literal
                    subs.extend(element.subs)
                buf.append("(...)")
            elif c in _WORD_END:
                break
            elif c == "\\":
                buf.append(self._advance(2))
            elif c == "'":
                buf.append(self._single_quoted())
            elif c == '"':
                buf.append(self._double_quoted(subs))
            elif c == "`":
                buf.append(self._backquoted(subs))
            elif c == "$":
                buf.append(self._dollar(subs))
            else:
                buf.append(self._advance())
        return Token("word", "".join(buf), line, tuple(subs))

    def _single_quoted(self) -> str:
        end = self.text.find("'", self.pos + 1)
        end = len(self.text) - 1 if end < 0 else end
        return self._advance(end + 1 - self.pos)

    def _double_quoted(self, subs: list[tuple[Token, ...]]) -> str:
        buf = [self._advance()]
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == '"':
                buf.append(self._advance())
                break
            if c == "\\":
                buf.append(self._advance(2))
            elif c == "$":
                buf.append(self._dollar(subs))
            elif c == "`":
                buf.append(self._backquoted(subs))
            else:
                buf.append(self._advance())
        return "".join(buf)

    def _backquoted(self, subs: list[tuple[Token, ...]]) -> str:
        line = self.line
        end = self.pos + 1
        while end < len(self.text) and self.text[end] != "`":
            end += 2 if self.text[end] == "\\" else 1
        code = self._advance(end + 1 - self.pos)
        subs.append(tuple(ShellLexer(code[1:-1], line).tokens()))
        return code

    def _dollar(self, subs: list[tuple[Token, ...]]) -> str:
        """`$((...))`, `$(...)` (its code into SUBS), `${...}`, or a plain parameter."""
        if self._at("$(("):
            self._advance()
            return "$" + self._balanced("(", ")")
        if self._at("$("):
            self._advance(2)
            subs.append(tuple(self._tokens(until_paren=True)))
            return "$(...)"
        if self._at("${"):
            self._advance(2)
            buf = ["${"]
            while self.pos < len(self.text) and self.text[self.pos] != "}":
                c = self.text[self.pos]
                if c == "\\":
                    buf.append(self._advance(2))
                elif c == "'":
                    buf.append(self._single_quoted())
                elif c == '"':
                    buf.append(self._double_quoted(subs))
                elif c == "$":
                    buf.append(self._dollar(subs))
                else:
                    buf.append(self._advance())
            return "".join(buf) + self._advance()
        match = _PARAMETER.match(self.text, self.pos)
        return self._advance(len(match.group()) if match else 1)

    def _balanced(self, opening: str, closing: str) -> str:
        """The text from an opening bracket at the position to its matching closing one."""
        depth = 0
        start = self.pos
        while self.pos < len(self.text):
            c = self._advance()
            depth += (c == opening) - (c == closing)
            if depth == 0:
                break
        return self.text[start : self.pos]


@dataclass
class _Functions:
    """The functions a script defines, and those that run their arguments as a command
    (`start_proc NAME CMD...`): name -> how many arguments come before the command."""

    names: set[str] = field(default_factory=set)
    runners: dict[str, int] = field(default_factory=dict)


@dataclass
class _Walk:
    """The state of one walk over a script's tokens."""

    functions: _Functions
    learning: bool = False  # the first walk: it learns the functions and records nothing
    found: list[tuple[str, int]] = field(default_factory=list)
    loops: dict[str, list[Token]] = field(default_factory=dict)
    function_stack: list[tuple[str, int]] = field(default_factory=list)  # (name, brace depth)
    braces: int = 0
    cases: list[str] = field(default_factory=list)  # "pattern" or "body", innermost last
    shifts: dict[str, int] = field(default_factory=dict)  # function -> arguments shifted

    def inner(self) -> _Walk:
        """A walk of code nested in this one (a substitution, `sh -c`'s code)."""
        return _Walk(self.functions, self.learning, self.found, self.loops, shifts=self.shifts)


def shell_functions(text: str) -> _Functions:
    """The functions shell code defines, and which of them run their arguments."""
    functions = _Functions()
    _walk_tokens(ShellLexer(text).tokens(), _Walk(functions, learning=True))
    return functions


def shell_commands(text: str, sourced: Iterable[str] = ()) -> list[tuple[str, int]]:
    """The bare command names that shell code calls, each with the line it is called on.
    SOURCED: the text of the files it sources (their functions are not commands)."""
    functions = shell_functions(text)
    for library in sourced:
        more = shell_functions(library)
        functions.names |= more.names
        functions.runners.update(more.runners)
    walk = _Walk(functions)
    _walk_tokens(ShellLexer(text).tokens(), walk)
    return sorted(walk.found, key=lambda found: found[1])


def _walk_tokens(tokens: Iterable[Token], walk: _Walk) -> None:
    tokens = list(tokens)
    for token in tokens:
        for sub in token.subs:
            _walk_tokens(sub, walk.inner())
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.kind == "newline" or token.text in _SEPARATORS:
            if token.text in (";;", ";&", ";;&") and walk.cases:
                walk.cases[-1] = "pattern"
            i += 1
        elif walk.cases and walk.cases[-1] == "pattern":
            i = _case_pattern(tokens, i, walk)
        else:
            i = _simple_command(tokens, i, walk)


def _case_pattern(tokens: list[Token], i: int, walk: _Walk) -> int:
    """Skips a case pattern up to its `)` (or leaves the case at `esac`)."""
    if tokens[i].text == "esac":
        walk.cases.pop()
        return i + 1
    while i < len(tokens) and tokens[i].text != ")":
        i += 1
    walk.cases[-1] = "body"
    return i + 1


def _simple_command(tokens: list[Token], i: int, walk: _Walk) -> int:
    """Reads one simple command from I; returns the index of the separator after it."""
    while i < len(tokens):
        token = tokens[i]
        text = token.text
        if token.kind == "newline" or text in _SEPARATORS:
            return i
        if token.kind == "op":  # a redirection and its target
            i += 2
        elif _ASSIGNMENT.match(text) or text in _LEADERS:
            i += 1
        elif text in ("{", "}"):
            _brace(walk, text)
            i += 1
        elif text in ("fi", "done", "esac", "]]"):
            if text == "esac" and walk.cases:
                walk.cases.pop()
            i += 1
        elif text == "case":
            while i < len(tokens) and tokens[i].text != "in":
                i += 1
            walk.cases.append("pattern")
            return i + 1
        elif text in ("for", "select"):
            return _for_loop(tokens, i, walk)
        elif text == "[[":
            while i < len(tokens) and tokens[i].text != "]]":
                i += 1
            i += 1
        elif text == "function" or _defines_function(tokens, i):
            i = _function_definition(tokens, i, walk)
        else:
            words = _words(tokens, i)
            _resolve(words, walk)
            return i + _span(tokens, i)
    return i


def _brace(walk: _Walk, text: str) -> None:
    walk.braces += 1 if text == "{" else -1
    if text == "}" and walk.function_stack and walk.function_stack[-1][1] == walk.braces:
        walk.function_stack.pop()


def _defines_function(tokens: list[Token], i: int) -> bool:
    after = [t.text for t in tokens[i + 1 : i + 3]]
    return after == ["(", ")"] and tokens[i].kind == "word"


def _function_definition(tokens: list[Token], i: int, walk: _Walk) -> int:
    if tokens[i].text == "function":
        i += 1
    name = tokens[i].text
    if walk.learning:
        walk.functions.names.add(name)
    walk.function_stack.append((name, walk.braces))
    i += 1
    if [t.text for t in tokens[i : i + 2]] == ["(", ")"]:
        i += 2
    return i


def _for_loop(tokens: list[Token], i: int, walk: _Walk) -> int:
    """`for VAR in WORDS`: the words are kept for `command -v "$VAR"` in its body."""
    variable = tokens[i + 1].text if i + 1 < len(tokens) else ""
    i += 2
    if i < len(tokens) and tokens[i].text == "in":
        i += 1
        start = i
        while i < len(tokens) and tokens[i].kind == "word":
            i += 1
        walk.loops[variable] = tokens[start:i]
    return i


def _span(tokens: list[Token], i: int) -> int:
    """How many tokens the simple command at I has."""
    n = 0
    while i + n < len(tokens):
        token = tokens[i + n]
        if token.kind == "newline" or token.text in _SEPARATORS:
            break
        n += 1
    return n


def _words(tokens: list[Token], i: int) -> list[Token]:
    """The words of the simple command at I, without redirections and their targets."""
    words: list[Token] = []
    end = i + _span(tokens, i)
    while i < end:
        if tokens[i].kind == "op":
            i += 2
        else:
            words.append(tokens[i])
            i += 1
    return words


def _resolve(words: list[Token], walk: _Walk) -> None:
    """Records the command a simple command calls, looking through wrappers and prefixes."""
    j = 0
    while j < len(words):
        text = words[j].text
        if _ASSIGNMENT.match(text):
            j += 1
        elif text in _SUDO_WORDS or text in WRAPPERS:
            if text in WRAPPERS and text not in SHELL_KEYWORDS | SHELL_BUILTINS:
                _record(words[j], walk)
            j = _after_options(words, j, WRAPPERS["sudo" if text in _SUDO_WORDS else text])
        elif text == "ip" and [w.text for w in words[j + 1 : j + 3]] == ["netns", "exec"]:
            _record(words[j], walk)
            j += 4
        elif text in walk.functions.runners:
            j += 1 + walk.functions.runners[text]
        elif text in ('"$@"', "$@"):
            _note_runner(walk)
            return
        elif text == "shift" and walk.function_stack:
            name = walk.function_stack[-1][0]
            count = words[j + 1].text if j + 1 < len(words) else "1"
            walk.shifts[name] = walk.shifts.get(name, 0) + (int(count) if count.isdigit() else 1)
            return
        else:
            _resolve_command(words, j, walk)
            return


def _resolve_command(words: list[Token], j: int, walk: _Walk) -> None:
    """The command at J, once prefixes and wrappers are past."""
    text = words[j].text
    rest = words[j + 1 :]
    if text == "command":
        if rest and rest[0].text in ("-v", "-V"):
            for word in rest[1:]:
                _record_probe(word, walk)
        elif rest:
            _resolve(rest[1:] if rest[0].text == "-p" else rest, walk)
        return
    if text in ("sh", "bash") and len(rest) >= 2 and rest[0].text == "-c":
        _record(words[j], walk)
        _walk_code(rest[1], walk)
        return
    if text == "trap" and rest:
        _walk_code(rest[0], walk)
        return
    if text == "find":
        _record(words[j], walk)
        for k, word in enumerate(rest[:-1]):
            if word.text in ("-exec", "-execdir", "-ok", "-okdir"):
                _record(rest[k + 1], walk)
        return
    if text in walk.functions.names or text in SHELL_BUILTINS or text in SHELL_KEYWORDS:
        return
    _record(words[j], walk)


def _after_options(words: list[Token], j: int, wrapper: Wrapper) -> int:
    """The index of the command that the wrapper at J runs."""
    k = j + 1
    while k < len(words):
        text = words[k].text
        if text == "--":
            k += 1
            break
        if text.startswith("-") and len(text) > 1:
            k += 2 if text in wrapper.options_with_value else 1
        elif wrapper.assignments and _ASSIGNMENT.match(text):
            k += 1
        else:
            break
    return k + wrapper.operands


def _note_runner(walk: _Walk) -> None:
    """`"$@"` as a command: the function it is in runs its arguments (after those it shifted)."""
    if walk.function_stack and walk.learning:
        name = walk.function_stack[-1][0]
        walk.functions.runners[name] = walk.shifts.get(name, 0)


def _walk_code(word: Token, walk: _Walk) -> None:
    """The commands of shell code passed as a quoted word (`sh -c '...'`, `trap '...' EXIT`)."""
    text = word.text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = ShellLexer(text[1:-1], word.line).tokens()
        _walk_tokens(inner, walk.inner())


def _record(word: Token, walk: _Walk) -> None:
    text = word.text
    if walk.learning or not _COMMAND_NAME.match(text) or text in walk.functions.names:
        return
    if text not in SHELL_BUILTINS and text not in SHELL_KEYWORDS:
        walk.found.append((text, word.line))


def _record_probe(word: Token, walk: _Walk) -> None:
    """`command -v NAME`, or `command -v "$v"` in a loop over literal names."""
    variable = re.fullmatch(r'"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?', word.text)
    if variable and variable.group(1) in walk.loops:
        for listed in walk.loops[variable.group(1)]:
            _record(listed, walk)
    else:
        _record(word, walk)


# ------------------------------------------------------------------------------------- Makefile

_MAKE_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(::=|:=|\?=|\+=|=)\s*(.*)$")
_MAKE_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def make_variables(text: str) -> dict[str, str]:
    """The variables a Makefile assigns (the last assignment wins; `+=` appends)."""
    variables: dict[str, str] = {}
    for line in text.splitlines():
        match = _MAKE_ASSIGN.match(line)
        if match:
            name, operator, value = match.groups()
            variables[name] = f"{variables.get(name, '')} {value}" if operator == "+=" else value
    return variables


def _make_reference(text: str, start: int) -> int:
    """The index after the `)` or `}` that closes the make reference opened at START (`$(`)."""
    opening, closing = text[start + 1], ")" if text[start + 1] == "(" else "}"
    depth, i = 0, start + 1
    while i < len(text):
        depth += (text[i] == opening) - (text[i] == closing)
        i += 1
        if depth == 0:
            break
    return i


def expand_make(text: str, variables: dict[str, str], shells: list[str], depth: int = 0) -> str:
    """TEXT with make's references expanded: a variable to its value, `$(shell X)` to a shell
    parameter (X goes to SHELLS), other functions to a parameter, `$$` to `$`."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$")
            i += 2
        elif text.startswith(("$(", "${"), i):
            end = _make_reference(text, i)
            inner = text[i + 2 : end - 1]
            if _MAKE_VARIABLE.match(inner):
                value = variables.get(inner, "") if depth < 10 else ""
                out.append(expand_make(value, variables, [], depth + 1))
            elif inner.startswith("shell "):
                shells.append(expand_make(inner[6:], variables, [], depth + 1))
                out.append("$MAKE_SHELL")
            else:
                out.append("$MAKE_FUNCTION")
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def makefile_shell(text: str) -> str:
    """The shell code a Makefile runs, line for line: recipe lines (without the leading tab and
    `@-+`) and the `$(shell ...)` calls of other lines; everything else is an empty line."""
    variables = make_variables(text)
    out: list[str] = []
    in_recipe = continued = False
    for line in text.splitlines():
        in_recipe = line.startswith("\t") or (continued and in_recipe)
        continued = line.endswith("\\")
        shells: list[str] = []
        if in_recipe:
            body = line[1:] if line.startswith("\t") else line
            out.append(expand_make(body.lstrip("@-+"), variables, shells))
            out[-1] = "; ".join([out[-1], *shells]) if shells and not continued else out[-1]
        else:
            expand_make(line, variables, shells)
            out.append("; ".join(shells))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------- Python

_SUBPROCESS = frozenset(
    {
        "subprocess.run", "subprocess.Popen", "subprocess.check_output", "subprocess.check_call",
        "subprocess.call", "asyncio.create_subprocess_exec",
    }
)  # fmt: skip
_ARGV_NAMES = re.compile(r"^(?:cmd|argv|command|\w+_cmd|\w+_argv)$")
_BINARY_NAMES = re.compile(r"(?:^|_)(?:binary|bin|executable|exe|browser)$", re.IGNORECASE)


def _bare_string(node: ast.expr | None) -> str | None:
    """A string constant that is a bare command name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if _COMMAND_NAME.match(node.value) else None
    return None


def _argv_command(node: ast.expr | None) -> str | None:
    """The command of an argv literal: the first element of a list or tuple, if a bare name."""
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        return _bare_string(node.elts[0])
    return None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


class _WrapperFinder(ast.NodeVisitor):
    """Finds the functions that pass one of their parameters to a subprocess call as its argv."""

    def __init__(self) -> None:
        self.stack: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.wrappers: dict[str, int] = {}

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if self.stack and node.args and _dotted(node.func) in _SUBPROCESS:
            function = self.stack[-1]
            params = [a.arg for a in function.args.args if a.arg not in ("self", "cls")]
            position = _argv_parameter(node.args[0], params)
            if position is not None:
                self.wrappers[function.name] = position
        self.generic_visit(node)


def _argv_parameter(argv: ast.expr, params: list[str]) -> int | None:
    """Which of PARAMS makes up ARGV: the whole argv, a `*param` in it, or else any use."""
    direct = {argv.id} if isinstance(argv, ast.Name) else set()
    if isinstance(argv, ast.List | ast.Tuple):
        direct = {
            e.value.id
            for e in argv.elts
            if isinstance(e, ast.Starred) and isinstance(e.value, ast.Name)
        }
    used = {n.id for n in ast.walk(argv) if isinstance(n, ast.Name)}
    for names in (direct, used):
        positions = [i for i, param in enumerate(params) if param in names]
        if positions:
            return positions[0]
    return None


def python_wrappers(tree: ast.AST) -> dict[str, int]:
    """Functions that pass one of their parameters to a subprocess call as its argv: name ->
    the position of that parameter (not counting self)."""
    finder = _WrapperFinder()
    finder.visit(tree)
    return finder.wrappers


def _wrappers_in_scope(
    tree: ast.Module, local: dict[str, int], wrappers: dict[str, int]
) -> dict[str, int]:
    """The wrappers a module can call by name: its own (LOCAL) and those it imports by name."""
    in_scope = dict(local)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in wrappers:
                    in_scope[alias.asname or alias.name] = wrappers[alias.name]
    return in_scope


def _call_command(
    node: ast.Call, by_name: dict[str, int], by_attribute: dict[str, int]
) -> str | None:
    """The command a call runs or looks up, if it is a bare name in the call."""
    name = _dotted(node.func)
    first = node.args[0] if node.args else None
    if name == "shutil.which":
        return _bare_string(first)
    if name == "asyncio.create_subprocess_exec":
        return _bare_string(first)
    if name in _SUBPROCESS:
        return _argv_command(first)
    func = node.func
    if isinstance(func, ast.Name) and func.id in by_name:
        position = by_name[func.id]
    elif isinstance(func, ast.Attribute) and func.attr in by_attribute:
        position = by_attribute[func.attr]
    else:
        return None
    return _argv_command(node.args[position]) if position < len(node.args) else None


def python_commands(
    source: str | ast.Module,
    wrappers: dict[str, int] | None = None,
    local: dict[str, int] | None = None,
) -> list[tuple[str, int]]:
    """The bare command names Python code (text or its tree) runs or looks up, each with its
    line. WRAPPERS: the project's functions that run an argument (python_wrappers of every
    module); LOCAL: those of this module (found again when not given)."""
    tree = ast.parse(source) if isinstance(source, str) else source
    local = python_wrappers(tree) if local is None else local
    by_name = _wrappers_in_scope(tree, local, wrappers or {})
    by_attribute = {**(wrappers or {}), **by_name}
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (command := _call_command(node, by_name, by_attribute)):
            found.append((command, node.lineno))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            found.extend((command, node.lineno) for command in _assigned_commands(node))
        elif isinstance(node, ast.For):
            found.extend(_probed_in_loop(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.extend(_parameter_defaults(node))
    return found


def _parameter_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, int]]:
    """`def capture(..., browser: str = "chromium")`: defaults of *_binary, browser, ... ."""
    positional = [*node.args.posonlyargs, *node.args.args]
    with_defaults = positional[len(positional) - len(node.args.defaults) :]
    pairs = [
        *zip(with_defaults, node.args.defaults, strict=True),
        *zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True),
    ]
    found: list[tuple[str, int]] = []
    for param, default in pairs:
        command = _bare_string(default) if _BINARY_NAMES.search(param.arg) else None
        if command:
            found.append((command, param.lineno))
    return found


def _assigned_commands(node: ast.Assign | ast.AnnAssign) -> Iterator[str]:
    """`cmd = ["x", ...]` (argv, *_cmd, ...) and `x_binary = "x"` (*_bin, browser, ...)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        label = target.attr if isinstance(target, ast.Attribute) else _dotted(target)
        if _ARGV_NAMES.match(label):
            command = _argv_command(node.value)
        else:
            command = _bare_string(node.value) if _BINARY_NAMES.search(label) else None
        yield from [command] if command else []


def _probed_in_loop(node: ast.For) -> list[tuple[str, int]]:
    """`for tool in ("a", "b"): shutil.which(tool)`: the literal names of the loop."""
    if not isinstance(node.target, ast.Name) or not isinstance(node.iter, ast.List | ast.Tuple):
        return []
    variable = node.target.id
    probed = any(
        isinstance(call, ast.Call)
        and _dotted(call.func) == "shutil.which"
        and bool(call.args)
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == variable
        for statement in node.body
        for call in ast.walk(statement)
    )
    found = (
        [(_bare_string(element), element.lineno) for element in node.iter.elts] if probed else []
    )
    return [(command, line) for command, line in found if command]


# ---------------------------------------------------------------------------------- the check


@dataclass(frozen=True)
class Call:
    """One call of a command: which, and where (a path relative to the root, and a line)."""

    command: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.command}"


def _interpreter(path: Path) -> bytes:
    """The `#!` line of a file (empty when it has none)."""
    with path.open("rb") as f:
        first = f.readline(200)
    return first if first.startswith(b"#!") else b""


def _is_shell_script(path: Path) -> bool:
    return path.suffix == ".sh" or re.search(rb"\b(ba)?sh\b", _interpreter(path)) is not None


def _is_python(path: Path) -> bool:
    return path.suffix == ".py" or b"python" in _interpreter(path)


def _files(root: Path, folder: str) -> list[Path]:
    """The files under ROOT/FOLDER, without hidden folders and caches."""
    base = root / folder
    if not base.is_dir():
        return []
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(base).parts)
    )


_SOURCE = re.compile(r"^\s*(?:source|\.)\s+\S*?([\w.-]+\.sh)\b", re.MULTILINE)


def shell_calls(root: Path) -> list[Call]:
    """The commands of the shell scripts under scripts/ and of `.ci/run`."""
    paths = [p for p in _files(root, "scripts") if _is_shell_script(p)]
    paths += [root / ".ci" / "run"] if (root / ".ci" / "run").is_file() else []
    texts = {p: p.read_text(encoding="utf-8") for p in paths}
    by_name = {p.name: text for p, text in texts.items()}
    calls: list[Call] = []
    for path, text in texts.items():
        sourced = [by_name[name] for name in _SOURCE.findall(text) if name in by_name]
        found = shell_commands(text, sourced)
        calls.extend(Call(c, str(path.relative_to(root)), n) for c, n in found)
    return calls


def makefile_calls(root: Path) -> list[Call]:
    """The commands of the Makefile's recipes and `$(shell ...)` calls."""
    path = root / "Makefile"
    if not path.is_file():
        return []
    found = shell_commands(makefile_shell(path.read_text(encoding="utf-8")))
    return [Call(c, "Makefile", n) for c, n in found]


def python_calls(root: Path) -> list[Call]:
    """The commands of the Python code under scripts/, ops/cachelab and ops/tests."""
    paths = [
        p
        for folder in ("scripts", "ops/cachelab", "ops/tests")
        for p in _files(root, folder)
        if _is_python(p)
    ]
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in paths}
    local = {p: python_wrappers(tree) for p, tree in trees.items()}
    wrappers = {name: i for found in local.values() for name, i in found.items()}
    calls: list[Call] = []
    for path, tree in trees.items():
        found = python_commands(tree, wrappers, local[path])
        calls.extend(Call(c, str(path.relative_to(root)), n) for c, n in found)
    return calls


def project_calls(root: Path) -> list[Call]:
    """Every command the scripts, the Makefile and the Python code of ROOT call."""
    return shell_calls(root) + makefile_calls(root) + python_calls(root)


def debian_packages(root: Path) -> set[str]:
    """The packages `scripts/install-debs.sh --list all` prints (none if it has no such list)."""
    script = root / "scripts" / "install-debs.sh"
    if not script.is_file():
        return set()
    done = subprocess.run(
        ["bash", str(script), "--list", "all"], capture_output=True, text=True, check=False
    )
    return set(done.stdout.split()) if done.returncode == 0 else set()


def _file_text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def why_not_installed(command: str, root: Path, packages: set[str]) -> str | None:
    """Why nothing installs COMMAND (None when something does)."""
    how = INSTALLED_BY.get(command)
    if how is None:
        return f"installed by nothing: add it to INSTALLED_BY in {Path(__file__).name}"
    if how.startswith("deb:"):
        package = how[4:]
        if package not in packages:
            return f"{how}, but scripts/install-debs.sh --list all does not print {package}"
        return None
    named = {
        "k8s-tools": ("scripts/k8s-tools.sh", _file_text(root / "scripts" / "k8s-tools.sh")),
        "venv": ("ops/pyproject.toml", _file_text(root / "ops" / "pyproject.toml")),
    }
    if how in named:
        where, text = named[how]
        if not re.search(rf"(?<![\w-]){re.escape(command)}(?![\w-])", text):
            return f"{how}, but {where} does not name {command}"
    return None


@dataclass
class Report:
    """The commands called, and the calls of those that nothing installs."""

    commands: dict[str, str]  # command -> how it is installed
    uncovered: list[tuple[Call, str]]

    def summary(self) -> str:
        """The one line printed when every command is installed."""
        kinds = {
            "deb": "a Debian package of scripts/install-debs.sh",
            "k8s-tools": "scripts/k8s-tools.sh",
            "venv": "the venv",
            "machine": "the machine",
        }
        counts = {
            kind: sum(1 for how in self.commands.values() if how.split(":")[0] == kind)
            for kind in kinds
        }
        parts = [f"{text} ({counts[kind]})" for kind, text in kinds.items() if counts[kind]]
        line = (
            f"install check: {len(self.commands)} commands, each installed by "
            f"{', '.join(parts[:-1])} or {parts[-1]}"
        )
        optional = sorted(c for c, how in self.commands.items() if how == "optional")
        if optional:
            line += f"; optional, installed by nothing: {', '.join(optional)}"
        return line


def check(root: Path) -> Report:
    """The commands ROOT calls, and the calls of those that nothing installs."""
    packages = debian_packages(root)
    calls = project_calls(root)
    reasons = {c.command: why_not_installed(c.command, root, packages) for c in calls}
    uncovered = [(c, reason) for c in calls if (reason := reasons[c.command]) is not None]
    commands = {c: INSTALLED_BY[c] for c, reason in reasons.items() if reason is None}
    return Report(commands, sorted(uncovered, key=lambda u: (u[0].command, u[0].path, u[0].line)))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else git_root()
    report = check(root)
    for call, reason in report.uncovered:
        print(f"{call}: {reason}")
    if report.uncovered:
        commands = sorted({call.command for call, _ in report.uncovered})
        print(
            f"install check: {len(commands)} command(s) that nothing in the project installs"
            f" ({', '.join(commands)}): a new machine (CI) lacks them",
            file=sys.stderr,
        )
        return 1
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
