"""The environment of Bash: under the sandbox built from an allowlist, never copied whole; without
one, frogtui's own minus anything that looks like a credential.

What passes: the names the person's shell and toolchain need (``PATH``, ``HOME``, locale, terminal,
``VIRTUAL_ENV``, conda, pyenv, nvm, asdf, rustup, Go, Java…) plus the names listed in
``[sandbox] env``. A name that looks like a credential is dropped even when allowlisted, unless the
person named it in ``[sandbox] env``.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

ALLOWED = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TZ",
    "LANG", "LANGUAGE", "LC_*", "EDITOR", "PAGER",
    "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "CONDA_PYTHON_EXE",
    "CONDA_SHLVL", "PYENV_ROOT", "PYENV_VERSION", "PYENV_SHELL", "PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED", "PYTHONUTF8", "PYTHONIOENCODING", "UV_PYTHON", "POETRY_VIRTUALENVS_IN_PROJECT",
    "NVM_DIR", "NVM_BIN", "NVM_INC", "NODE_PATH", "NODE_ENV", "NODE_EXTRA_CA_CERTS", "ASDF_DIR", "ASDF_DATA_DIR",
    "ASDF_*_VERSION", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_HOME", "RUST_BACKTRACE", "GOPATH", "GOROOT", "GOBIN",
    "GOFLAGS", "GOCACHE", "GOMODCACHE", "GOTOOLCHAIN", "JAVA_HOME", "GRADLE_USER_HOME", "M2_HOME", "GEM_HOME", "GEM_PATH",
    "BUNDLE_PATH", "RBENV_ROOT", "RBENV_VERSION", "SDKMAN_DIR", "DOTNET_ROOT", "DENO_DIR", "BUN_INSTALL", "VOLTA_HOME",
    "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CC", "CXX",
    "CFLAGS", "CXXFLAGS", "LDFLAGS", "MAKEFLAGS", "CMAKE_PREFIX_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "CI",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
)
"""Names (``fnmatch`` patterns) passed to sandboxed Bash."""

CREDENTIAL_NAME = re.compile(
    r"TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION_KEY"
    r"|^AWS_|^AZURE_|^GCP_|^GOOGLE_APPLICATION|^GH_|^GITHUB_|^GITLAB_|^HF_|^HUGGING_?FACE|^OPENAI_|^ANTHROPIC_"
    r"|^NPM_|^PYPI_|^TWINE_|^DOCKER_|^SSH_AGENT|^GPG_AGENT|^KUBECONFIG$",
    re.IGNORECASE,
)
"""Names never passed to Bash without a sandbox (frogtui's own environment minus these, as before
the allowlist; ``[sandbox] env`` does not apply there)."""

SECRET_LOOKING = re.compile(
    rf"{CREDENTIAL_NAME.pattern}|PASS$|PGPASS|SESSION|JWT|DSN|WEBHOOK|_SK$|_KEY$|DATABASE_URL|_URI$|^SSH_AUTH|^BW_|^OP_|^VAULT_|^CI_JOB",
    re.IGNORECASE,
)
"""Names that look like credentials: dropped in the sandbox even when allowlisted, unless named in
``[sandbox] env``."""


def sandbox_environment(environ: Mapping[str, str], named: Iterable[str] = ()) -> dict[str, str]:
    """The allowlisted part of ``environ`` plus the variables the person named."""
    named = set(named)
    env = {}
    for name, value in environ.items():
        if name in named or (_ALLOWED.match(name) and not SECRET_LOOKING.search(name)):
            env[name] = value
    return env


_ALLOWED = re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in ALLOWED))
"""``ALLOWED``'s shell patterns as one expression (``fnmatchcase`` of each, once per command, cost
milliseconds: a few hundred variables times the patterns)."""
