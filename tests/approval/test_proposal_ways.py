"""Which way a proposal runs (``approval.sandbox.views``): the setting ``[bash] proposals`` (``true``,
``false``, ``"auto"``, ``"overlay"``, ``"fuse"``, ``"undo"``), the fallbacks in order, the line
``frogtui doctor`` and the session log show, and fuse-overlayfs's upper layer rewritten to the
kernel's form (``fuse.settle``). The fallbacks are simulated on a machine where the kernel's
overlay works by naming them in the setting (tests/test_proposals_headless.py runs each end to end)."""
from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest

from frogtui.approval.rules import SandboxSettings, combine, parse_rules
from frogtui.approval.sandbox import fuse, make_sandbox, make_view, proposals_line
from frogtui.approval.sandbox.fuse import settle
from frogtui.errors import ConfigError
from frogtui.tools.effects import OPAQUE, read_effects
from frogtui.tools.workspace import Workspace
from tests.overlay import needs_bwrap, needs_fuse, needs_overlay


@pytest.mark.parametrize(("value", "on", "way"), [
    ("true", True, "auto"), ("false", False, "auto"), ('"auto"', True, "auto"), ('"overlay"', True, "overlay"),
    ('"fuse"', True, "fuse"), ('"undo"', True, "undo"),
])
def test_the_setting_keeps_true_and_false_and_names_a_way(value: str, on: bool, way: str) -> None:
    rules = combine(parse_rules(f"[bash]\nproposals = {value}\n", "user"), None)
    assert (rules.proposals, rules.proposals_way) == (on, way)


def test_a_way_that_does_not_exist_is_one_clear_message() -> None:
    with pytest.raises(ConfigError, match=r"\[bash\] proposals must be true, false, 'auto', 'overlay', 'fuse', 'undo', not 'tmpfs'"):
        parse_rules('[bash]\nproposals = "tmpfs"\n', "user")


def test_an_untrusted_project_may_turn_proposals_off_but_never_choose_a_way() -> None:
    user = parse_rules('[bash]\nproposals = "fuse"\n', "user")
    rules = combine(user, parse_rules('[bash]\nproposals = "undo"\n', "project"))
    assert (rules.proposals, rules.proposals_way) == (True, "fuse")
    assert any('ignored [bash] proposals = "undo" in project' in note for note in rules.notes)
    assert not combine(user, parse_rules("[bash]\nproposals = false\n", "project")).proposals


@pytest.fixture
def sandbox(tmp_path: Path) -> object:
    (tmp_path / "tmp").mkdir()
    return make_sandbox(Workspace(tmp_path, tmp_dir=tmp_path / "tmp"), SandboxSettings()).wrap


@needs_overlay
@needs_fuse
@pytest.mark.parametrize(("setting", "kind", "line"), [
    ("auto", "overlay", "proposals: on, kernel overlay (overlayfs in a user namespace): "),
    ("overlay", "overlay", "proposals: on, kernel overlay (overlayfs in a user namespace): "),
    ("fuse", "fuse", "proposals: on, fuse-overlayfs (in a user namespace): "),
    ("undo", "undo", "proposals: WARNING on, run then undo from the checkpoint (no copy-on-write view here): "),
])
def test_doctor_says_which_way_runs(sandbox: object, tmp_path: Path, setting: str, kind: str, line: str) -> None:
    view, why = make_view(sandbox, tmp_path, setting)
    assert view is not None and view.kind == kind, why
    assert proposals_line(view, why).startswith(line)


@needs_bwrap
def test_outside_git_there_is_no_undo_and_the_line_says_why(sandbox: object, tmp_path: Path) -> None:
    view, why = make_view(sandbox, tmp_path, "undo", repository=False)
    assert view is None
    assert proposals_line(view, why).startswith("proposals: WARNING off (not a git repository (no checkpoint to undo from))")


def test_without_a_sandbox_there_is_no_way() -> None:
    view, why = make_view(None, Path("/"), "undo")
    assert view is None and proposals_line(view, why).startswith("proposals: WARNING off (Bash has no bubblewrap sandbox)")


def test_fuse_overlayfs_marks_are_read_as_the_kernels(tmp_path: Path) -> None:
    """An opaque folder marked fuse-overlayfs's way (an attribute, or its ``.wh..wh..opq`` and
    ``.wh..opq`` files) and a whiteout written as a ``.wh.NAME`` file are rewritten to the kernel's
    form, so the effects read the same; a ``user.overlay.opaque`` a command set is dropped."""
    tree, upper = tmp_path / "tree", tmp_path / "upper"
    for folder in ("d", "e", "f"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "old.txt").write_text("old\n")
    (tree / "gone.txt").write_text("gone\n")
    (upper / "d").mkdir(parents=True)
    (upper / "d" / "new.txt").write_text("new\n")
    (upper / "d" / ".wh..wh..opq").write_text("")
    (upper / "e").mkdir()
    os.setxattr(upper / "e", "user.fuseoverlayfs.opaque", b"y")
    (upper / "f").mkdir()
    os.setxattr(upper / "f", OPAQUE, b"y")  # what a command sets through fuse-overlayfs is stored as it is
    (upper / ".wh.gone.txt").write_text("")
    settle(upper)
    assert sorted(os.listdir(upper)) == ["d", "e", "f", "gone.txt"] and os.listdir(upper / "d") == ["new.txt"]
    assert stat.S_ISCHR(os.lstat(upper / "gone.txt").st_mode) and os.lstat(upper / "gone.txt").st_rdev == 0
    assert [e.describe() for e in read_effects(upper, tree)] == [
        "added d/new.txt", "deleted d/old.txt", "deleted e/old.txt", "deleted gone.txt",
    ]


@needs_overlay
def test_where_fuse_overlayfs_cannot_mount_the_probe_says_why(sandbox: object, tmp_path: Path) -> None:
    """Simulated: a fuse-overlayfs that fails as it does where ``/dev/fuse`` is not open to the
    person (measured here as uid 65534: /dev/fuse is 0600 on this machine)."""
    fake = tmp_path / "bin" / "fuse-overlayfs"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'fuse: failed to open /dev/fuse: Permission denied' >&2\n"
                    "echo 'fuse-overlayfs: cannot mount: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    found = fuse.find_programs(tmp_path)
    assert not isinstance(found, str), found
    programs = dataclasses.replace(found, fuse_overlayfs=str(fake))
    problem = fuse.probe(programs)
    assert problem == ("fuse-overlayfs cannot mount in a user namespace here (fuse: failed to open /dev/fuse: Permission denied; "
                       "fuse-overlayfs: cannot mount: Permission denied)")


@needs_bwrap
def test_auto_falls_back_in_order_and_the_line_says_why_each_was_not_taken(sandbox: object, tmp_path: Path) -> None:
    """Where bubblewrap can make no user namespace (``privileges = "caps"``), neither view can be
    mounted: ``auto`` runs then undoes, and says why not the others; outside git, off."""
    caps = dataclasses.replace(sandbox, privileges="caps")
    view, why = make_view(caps, tmp_path, "auto")
    assert view is not None and view.kind == "undo"
    assert proposals_line(view, why).startswith(
        "proposals: WARNING on, run then undo from the checkpoint (no copy-on-write view here; kernel overlay: bubblewrap cannot "
        "make a user namespace here; fuse-overlayfs: bubblewrap cannot make a user namespace here): ")
    view, why = make_view(caps, tmp_path, "auto", repository=False)
    assert view is None and why.endswith("run then undo: not a git repository (no checkpoint to undo from)")
