"""The Examples sections of the utility, studies and plots modules run as doctests."""

import doctest
import importlib

import pytest

MODULES = [
    "microsdc.utility._distance", "microsdc.utility._rank", "microsdc.utility._matrix",
    "microsdc.utility._probabilistic", "microsdc.utility._eigen", "microsdc.utility._robust",
    "microsdc.utility._categorical", "microsdc.utility._benchmark", "microsdc.utility._report",
    "microsdc._studies", "microsdc._plots",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
