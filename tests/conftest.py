"""Shared test settings: where the test data are, and the hypothesis profiles."""

import os
from pathlib import Path

from hypothesis import settings

#: ``fast`` for ``make test``; ``ci`` (more examples) for ``make test-slow``, which runs every
#: property test again with it (``HYPOTHESIS_PROFILE=ci``). Tests that set ``max_examples``
#: themselves keep their own number.
settings.register_profile("fast", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

#: Small input files of the tests, one folder per area; each folder's README.md names every
#: file's source and licence. Tests read nothing outside the repository.
DATA = Path(__file__).resolve().parent / "data"
