"""The session: the composition root, the one place that wires the parts together for a front end.

- ``folder.py``: ``Session``, the session folder (trajectory, journal, replay file, log, notices)
  outside the repository, in the user's XDG state folder.
- ``core.py``: ``SessionCore``, one session built from a ``Config`` (the model, the policy, the
  Bash sandbox, the tool runner, checkpoints, the agent); every front end (the app, ``frogtui
  run``, the ACP agent, attempts) asks it what it needs.
- ``log.py``: ``SessionLog``, the session log fed from the loop's events (the same lines whichever
  front end ran).
- ``tally.py``: ``RunTally``, a run's events counted into its one-line summary.

Only ``Session`` is imported here: opening the app imports this package before the first paint,
and the core's imports (the policy, git, the loop) come later, with the session.
"""
from frogtui.session.folder import Session

__all__ = ["Session"]
