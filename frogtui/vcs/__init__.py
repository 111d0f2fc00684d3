"""Git integration (the only package that imports git and unidiff).

gitpython runs ``git version`` when it is imported, by the name ``GIT_PYTHON_GIT_EXECUTABLE``
gives, else ``git`` looked up on ``PATH``: so that name is set here, before any module of this
package imports git, to the git of frogtui's clean ``PATH`` (``frogtui.programs``), and put back."""
from __future__ import annotations

import os

from frogtui.programs import at_start

_VARIABLE = "GIT_PYTHON_GIT_EXECUTABLE"
_before = os.environ.get(_VARIABLE)
os.environ[_VARIABLE] = at_start().which("git") or "git-not-found-outside-a-repository"
try:
    import git  # noqa: F401  (gitpython's refresh runs now, with the pinned git)
finally:
    if _before is None:
        del os.environ[_VARIABLE]
    else:
        os.environ[_VARIABLE] = _before
