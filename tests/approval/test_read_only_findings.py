"""The read-only default fails closed (issue 23, item 1; findings 3 and 4): what runs code, writes a
file or reads outside the repository, and anything the analysis does not know, is not allowed
without asking. Each line was allowed as read-only before. ``<HOME>`` is the fake home folder.

``RULES`` lists what an allow rule for the program must not allow either (the effect model sees
the same thing); the rest is about the read-only default only (a rule allows the program's own
behaviour, e.g. ``tar *`` listing a compressed archive)."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, parse_rules
from frogtui.approval.rules import RuleSet, combine
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace
from tests.approval.conftest import make_home, make_repo
from tests.approval.test_policy_effects import READ_ONLY_EVERYDAY

FINDINGS: list[tuple[str, str]] = [
    # code-evaluating builtins and arithmetic
    ('mapfile -t -c 1 -C "echo X > Makefile #" arr <<< x', "mapfile -C runs a callback"),
    ('readarray -C "echo X > Makefile #" -c 1 arr <<< x', "readarray -C runs a callback"),
    ('v=\'a[$(touch m)]\'; declare -i x="$v"', "declare -i evaluates the value as arithmetic"),
    ("unset 'a[$(touch m)]'", "unset evaluates a subscript"),
    ("eval ls", "eval evaluates code"),
    ("trap 'touch m' EXIT", "trap runs code later"),
    ("(( x = 1 ))", "an arithmetic command"),
    ("[[ -v a ]]", "a conditional that may evaluate arithmetic"),
    ("let x=1", "let is arithmetic"),
    ("echo ${arr[x]}", "an array subscript is arithmetic"),
    ("echo ${v:x}", "a substring offset is arithmetic"),
    ("echo ${#arr[x]}", "the length of an element: a subscript"),
    # awk
    ("awk -W exec FILE", "awk -W exec runs a file"),
    ("awk -W exec - <<< 'BEGIN{system(\"touch m\")}'", "awk -W exec - runs its input"),
    ("awk 'BEGIN{printf \"...\", /{/ > \"Makefile\"}'", "a regex literal holding { hides a redirection"),
    ("awk 'BEGIN{f=\"system\"; @f(\"touch m\")}'", "gawk's indirect call"),
    ("awk '@f()'", "gawk's indirect call"),
    ("awk '/\"/{print | \"sh\"}/\"/' calc.py", "a quote in a regex literal hides a pipe"),
    # a word only known when it runs, split by bash into several
    ("timeout $(printf '%s' '9 sh -c touch\\ m') ls", "timeout: the split word is the program"),
    ("taskset $(printf '%s' '1 touch m') ls", "taskset"),
    ("nice -n $(printf '%s' '5 touch m') ls", "nice -n"),
    ("stdbuf $(printf '%s' '-oL touch m') ls", "stdbuf"),
    ("ionice $(printf '%s' '-c3 touch m') ls", "ionice"),
    ("chrt $(printf '%s' '1 touch m') ls", "chrt"),
    ("rg x $(printf -- --pre=rm) .", "rg --pre hidden in a substitution"),
    ("git grep $(printf -- --open-files-in-pager=rm) x", "git grep -O hidden in a substitution"),
    ('rg "$OPTS" x', "rg's options only known at run time"),
    ("ls $X", "a variable where an option may be"),
    ("ls -$X", "a variable in an option"),
    ("echo ${x@P} RAN", "prompt expansion"),
    ("`echo ls`", "backticks as the program"),
    # git
    ("git -C nested status", "the nested repository's core.fsmonitor runs"),
    ("cd nested && git status", "the nested repository's core.fsmonitor runs"),
    ("git -c core.fsmonitor=x status", "a setting that runs a program"),
    # decompressors, writes
    # reads outside the repository (finding 4)
    ("jq -n --rawfile x <HOME>/.claude/.credentials.json '$x'", "jq --rawfile reads any file"),
    ("jq -n --slurpfile x <OUT>/notes.json '$x'", "jq --slurpfile reads any file"),
    ("git blame --contents <OUT>/notes.json calc.py", "git blame --contents reads any file"),
    ("git config --list --file <OUT>/notes.json", "git config --file reads any file"),
]

RULES = {
    'mapfile -t -c 1 -C "echo X > Makefile #" arr <<< x': "mapfile *",
    'readarray -C "echo X > Makefile #" -c 1 arr <<< x': "readarray *",
    'v=\'a[$(touch m)]\'; declare -i x="$v"': "declare *",
    "unset 'a[$(touch m)]'": "unset *",
    "awk -W exec FILE": "awk *",
    "awk 'BEGIN{printf \"...\", /{/ > \"Makefile\"}'": "awk *",
    "awk 'BEGIN{f=\"system\"; @f(\"touch m\")}'": "awk *",
    "awk -o out '{print}' calc.py": "awk *",
    "awk --profile=out '{print}' calc.py": "awk *",
    "awk '/\"/{print | \"sh\"}/\"/' calc.py": "awk *",
    "tar tIf 'sh -c \"touch m\"' /dev/null": "tar *",
    "timeout $(printf '%s' '9 sh -c touch\\ m') ls": "timeout *",
    "rg x $(printf -- --pre=rm) .": "rg *",
    "git grep $(printf -- --open-files-in-pager=rm) x": "git grep *",
    'find . "$EXPR"': "find *",
    'rg "$OPTS" x': "rg *",
    "git --exec-path=DIR status": "git *",
    "file -z calc.py": "file *",
    "uniq a b": "uniq *",
    "jq -n --rawfile x <HOME>/.claude/.credentials.json '$x'": "jq *",
    "jq -n --slurpfile x <OUT>/notes.json '$x'": "jq *",
    "git blame --contents <OUT>/notes.json calc.py": "git blame *",
    "tree --fromfile <OUT>/notes.json": "tree *",
    "hexdump -f <OUT>/notes.json calc.py": "hexdump *",
    "git config --list --file <OUT>/notes.json": "git config *",
    "strings @<OUT>/notes.json": "strings *",
    "md5sum -c <OUT>/notes.json": "md5sum *",
}


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("findings")
    home = make_home(base)
    repo = make_repo(base, home)
    (repo / "a").write_text("a\n")
    (repo / "b").write_text("b\n")
    (repo / "nested").mkdir()
    (repo / "nested" / ".git").mkdir()
    (base / "outside" / "notes.json").write_text("{}\n")
    tmp_dir = base / "session-tmp"
    tmp_dir.mkdir()
    return repo, tmp_dir, home


def decide(places: tuple[Path, Path, Path], command: str, rules: RuleSet) -> object:
    repo, tmp_dir, home = places
    engine = PolicyEngine(Workspace(repo, tmp_dir=tmp_dir), rules, home=str(home))
    text = command.replace("<HOME>", str(home)).replace("<OUT>", str(repo.parent / "outside"))
    return engine.evaluate(ToolCall("t", "Bash", {"command": text}))


@pytest.mark.parametrize(("command", "note"), FINDINGS, ids=[f[0] for f in FINDINGS])
def test_the_read_only_default_does_not_allow_it(places: tuple[Path, Path, Path], command: str, note: str) -> None:
    decision = decide(places, command, RuleSet())
    assert decision.kind != "allow" and not decision.read_only, f"{command!r} ({note}): {decision}"


@pytest.mark.parametrize(("command", "rule"), sorted(RULES.items()), ids=sorted(RULES))
def test_an_allow_rule_for_the_program_does_not_allow_it_either(places: tuple[Path, Path, Path], command: str, rule: str) -> None:
    rules = combine(parse_rules(f'[[rules]]\ntool = "Bash"\nmatch = "{rule}"\ndecision = "allow"\n', "rules.toml"), None)
    decision = decide(places, command, rules)
    assert decision.kind != "allow", f"{command!r} under {rule!r}: {decision}"


MORE_EVERYDAY = [
    "head -5 calc.py",
    "tail -n +3 calc.py",
    "ls -la --color=auto",
    "grep -rn --include='*.py' add .",
    "rg -n -i --hidden add",
    "git log --oneline --graph -n 5",
    "git diff --stat HEAD~1",
    "git --no-pager log -1",
    "wc -l calc.py docs/guide.md",
    "echo $HOME",
    "for f in *.py; do echo $f; done",
    "ls | head -3",
    "diff -u a b",
    "stat -c %s calc.py",
    "du -sh docs",
    "[ -d docs ] && echo dir",
    "git log -p -5",
    "git log --since='2 weeks ago' --oneline",
    "git show HEAD:calc.py",
    "git rev-parse --abbrev-ref HEAD",
    "git log --pretty=format:'%h %an' -3",
    "git blame -L 1,2 calc.py",
    "git ls-tree -r HEAD --name-only",
    "test -f calc.py && echo yes",
]


@pytest.mark.parametrize("command", [*READ_ONLY_EVERYDAY, *MORE_EVERYDAY])
def test_everyday_reading_is_still_allowed(places: tuple[Path, Path, Path], command: str) -> None:
    decision = decide(places, command, RuleSet())
    assert (decision.kind, decision.read_only) == ("allow", True), decision
