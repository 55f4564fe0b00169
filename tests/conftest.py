"""Shared test fixtures: where the shared data folder is, and a hypothesis profile."""

from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=40, deadline=None)
settings.load_profile("ci")

#: ``shared/`` sits beside the repository (in development and in CI).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = SHARED / "data"
    if not path.is_dir():
        pytest.fail(f"shared data folder not found at {path}")
    return path

#: Small input files of the tests, one folder per area; each folder's README.md names every
#: file's source and licence. Tests read nothing outside the repository.
DATA = Path(__file__).resolve().parent / "data"
