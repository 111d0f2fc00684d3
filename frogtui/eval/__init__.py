"""``frogtui eval``: the agent over a task set, and what it resolves (docs/EVAL.md).

- ``tasks``: SWE-bench's instance format read from a local file; ``--ids``, ``--filter``, ``--shard``;
- ``attempt``: one attempt at one task, run as ``frogtui run`` runs a task, in a throwaway clone;
- ``check``: the local test check of a prediction (what ``resolved`` means here);
- ``outputs``: the output folder (predictions, results, trajectories) and how a rerun continues;
- ``batch``: the attempts left, how many at once, stopping cleanly, the summary;
- ``summary``: resolved with a 95% interval, pass@k, failure classes;
- ``mine``: tasks from a repository's own history; ``examples``: the shipped task set;
- ``cli``: the ``eval`` subcommand's parsers.
"""
