"""Shared test settings: where the test data are, and a hypothesis profile."""

from pathlib import Path

from hypothesis import settings

settings.register_profile("ci", max_examples=40, deadline=None)
settings.load_profile("ci")

#: Small input files of the tests, one folder per area; each folder's README.md names every
#: file's source and licence. Tests read nothing outside the repository.
DATA = Path(__file__).resolve().parent / "data"
