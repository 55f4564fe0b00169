"""The Examples sections of the utility, studies and plots modules run as doctests."""

import doctest
import importlib

import pytest

MODULES = [
    "microsdc.utility.distance", "microsdc.utility.rank", "microsdc.utility.matrix",
    "microsdc.utility.probabilistic", "microsdc.utility.eigen", "microsdc.utility.robust",
    "microsdc.utility.categorical", "microsdc.utility.benchmark", "microsdc.utility.report",
    "microsdc.studies", "microsdc.plots",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
