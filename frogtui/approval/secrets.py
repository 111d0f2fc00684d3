"""Where the person's secrets live: one list for the floor (reading them is never allowed) and for
the sandbox (they are masked, empty, inside it). Data only; ``[sandbox] hide``/``expose`` extend it
for the sandbox."""
from __future__ import annotations

SECRET_STORES = (
    # keys and credentials
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".config/gh",
    ".netrc", ".git-credentials", ".config/git/credentials", ".npmrc", ".yarnrc", ".pypirc",
    ".cargo/credentials", ".cargo/credentials.toml", ".vault-token", ".terraform.d", ".terraformrc",
    ".config/rclone", ".config/hub", ".config/op", ".gem/credentials", ".m2/settings.xml",
    ".gradle/gradle.properties", ".pgpass", ".my.cnf", ".s3cfg", ".boto", ".config/doctl",
    ".huggingface/token", ".cache/huggingface/token", ".config/hf/token",
    ".claude/.credentials.json", ".codex/auth.json", ".config/github-copilot", ".config/containers/auth.json", ".Xauthority",
    ".config/sops", ".pulumi", ".wrangler", ".config/configstore", ".oci", ".vscode-server", ".config/gitlab-cli",
    ".m2/settings-security.xml", ".local/share/uv/credentials", ".config/uv/credentials",
    # registry and channel tokens in the folders the sandbox shows (toolchains): their config files
    ".cargo/config.toml", ".cargo/config", ".conda/.condarc", "miniconda3/.condarc", "anaconda3/.condarc", "miniforge3/.condarc",
    "mambaforge/.condarc", ".nvm/versions/node/*/etc/npmrc", ".volta/tools/image/node/*/etc/npmrc", ".pyenv/versions/*/pip.conf",
    ".gradle/init.gradle", ".gradle/init.d",
    # keyrings and password stores
    ".local/share/keyrings", ".password-store", ".pki", ".config/Bitwarden CLI",
    # shell and REPL histories
    ".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history",
    ".psql_history", ".mysql_history", ".node_repl_history", ".sqlite_history", ".lesshst", ".viminfo",
    # browser profiles and mail
    ".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".config/vivaldi", ".config/opera",
)
"""Folders and files under a home folder that hold credentials, keys, histories or browser
profiles: below the floor for every tool, and masked (empty) inside the sandbox. A ``*`` stands for
one name (a node or Python version): ``.nvm/versions/node/*/etc/npmrc``."""

SECRET_NAMES = frozenset({".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".password-store", "keyrings"})
"""Names that mark a secret store anywhere outside the repository."""

SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh/ssh_host_")
"""System files that hold secrets (a trailing ``_`` is a name prefix)."""

PROCESS_SECRETS = ("environ", "cmdline")
"""Files of each process, ``/proc/<pid>/<name>`` (and ``/proc/<pid>/task/<tid>/<name>``), that hold
its environment and arguments (tokens, DSNs): below the floor for every tool. Not masked in the
sandbox, whose ``/proc`` is its own (a fresh one, its own processes only)."""

RUNTIME_FOLDERS = ("/run", "/var/run", "/var/lib/docker", "/var/lib/containerd")
"""Folders that hold sockets and daemons' state (docker.sock, D-Bus, agents): hidden in the sandbox."""
