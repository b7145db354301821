"""Where the tests find files that live beside the repository (`../shared`) rather than in it.

Some fixtures quote benchmark data whose licence does not let the project ship it (the VTC-Bench
rows, the decrypted VisBrowse-Bench questions, TIR-Bench prompts taken from its unlicensed demo
file). They are read in place from the shared folder: `$TOOLSIGHT_SHARED` when set, else the
`shared/` folder next to the checkout. Vectors whose inputs were constructed live in the repo
(`tests/fidelity/vectors/`, see PROVENANCE.md there) and never depend on this folder.

A missing shared file skips the test with its path and the fix printed — except under CI (the
`CI` environment variable set to anything but ``""``/``0``/``false``), where it fails: CI always
has the shared folder, so a missing one is a broken setup, not a reason to go green.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_ENV = "TOOLSIGHT_SHARED"
REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "tests" / "fidelity" / "vectors"


def in_ci() -> bool:
    """True when the `CI` environment variable is set to a true-ish value."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def shared_dir() -> Path:
    """The shared folder: `$TOOLSIGHT_SHARED`, else `<checkout>/../shared`."""
    env = os.environ.get(SHARED_ENV, "").strip()
    return Path(env).expanduser() if env else REPO.parent / "shared"


def missing(what: str) -> None:
    """Skip (locally, with the reason printed) or fail (under CI) because `what` is absent."""
    reason = (f"{what} not found; it lives in the shared folder beside the repository "
              f"(set {SHARED_ENV}=/path/to/shared)")
    if in_ci():
        pytest.fail(f"{reason} — required under CI", pytrace=False)
    print(f"SKIP: {reason}")
    pytest.skip(reason)


def shared_file(rel: str) -> Path:
    """The path of a shared file; skips or fails (see `missing`) when it is not there."""
    path = shared_dir() / rel
    if not path.exists():
        missing(str(path))
    return path
