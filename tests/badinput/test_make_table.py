"""docs/reliability.md shows the outcome every case of the suite gets today."""

from .cases import CASES
from .make_table import END, PAGE, START, updated_page


def test_the_reliability_page_is_up_to_date():
    text = PAGE.read_text(encoding="utf-8")
    assert START in text and END in text
    assert updated_page(text) == text, "run: python -m tests.badinput.make_table"
    rows = text.split(START)[1].split(END)[0].strip().splitlines()[2:]
    assert len(rows) == len(CASES)
