"""Several attempts at one task (``frogtui run TASK --attempts N``): each a fresh conversation on a git
worktree of the person's current state (``vcs.worktrees``), in its own sandbox, sampling with its
own seed on one loaded model; the repository's check decides which passed, and the best passing one
may be applied to the working tree as one checkpointed step.

- ``check``: which command checks an attempt, and running it in the attempt's sandbox;
- ``results``: one attempt's outcome, identical patches grouped, the table, the best pick;
- ``running``: the worktrees, the sessions, sequential or concurrent attempts, ``attempts.json``;
- ``pick``: applying one attempt to the person's working tree as a checkpointed step.
"""
