"""Codes are listed in the hierarchy's order, whatever the order of the data: publishable
files (both layouts), status maps, the tables of reports and the browser app, from one
ordering of the core (``Hierarchy.sorted_codes``)."""

import numpy as np
import pandas as pd

from sdcreport import TableBlock
from tabsdc import FrequencyRule, Hierarchy, Table, apply_rules
from tabsdc._plots import status_map
from tabsdc._release import publishable_frame
from tabsdc.audit import audit
from tabsdc.suppression import suppress
from tabsdc.ui._views import ordered_codes, status_grid

SECTORS = ["S1", "S2", "S4", "S3"]  # the order of the data
REGIONS = ["R2", "R1"]


def data_order_table() -> Table:
    cells = pd.DataFrame([(s, r) for s in SECTORS for r in REGIONS], columns=["sector", "region"])
    cells["value"] = np.arange(1.0, len(cells) + 1) * 10
    cells["freq"] = [1, 5, 5, 5, 5, 1, 5, 5]
    return Table.from_aggregated(cells, ["sector", "region"], freq="freq")


def test_the_hierarchy_lists_codes_depth_first_with_sorted_children():
    h = Hierarchy.from_levels(pd.DataFrame({"l1": ["B", "A", "A", "B"],
                                            "l2": ["B2", "A10", "A02", "B1"]}))
    assert h.codes == ("Total", "B", "B2", "B1", "A", "A10", "A02")  # first seen
    assert h.sorted_codes == ("Total", "A", "A02", "A10", "B", "B1", "B2")
    assert ordered_codes(h) == [(c, h.depth(c)) for c in h.sorted_codes]


def test_publishable_files_list_codes_in_hierarchy_order():
    table = data_order_table()
    long = publishable_frame(table)
    expected = [(s, r) for s in ["Total", "S1", "S2", "S3", "S4"]
                for r in ["Total", "R1", "R2"]]
    assert list(zip(long["sector"], long["region"], strict=True)) == expected
    values = dict(zip(table.cells.index, table.values, strict=True))
    assert long["value"].tolist() == [f"{values[cell]:.0f}" for cell in expected]
    wide = publishable_frame(table, layout="wide")
    assert wide.columns.tolist() == ["sector", "Total", "R1", "R2"]
    assert wide["sector"].tolist() == ["Total", "S1", "S2", "S3", "S4"]


def test_status_maps_and_report_tables_list_codes_in_hierarchy_order():
    table = data_order_table()
    rules = apply_rules(table, [FrequencyRule(3)])
    protected = suppress(rules.table, "optimal", time_limit=60)
    figure = status_map(protected.table)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels == ["Total", "S1", "S2", "S3", "S4"]
    assert table.pivot().index.tolist() == ["Total", "S1", "S2", "S3", "S4"]
    grid = status_grid(protected.table, "sector", "region")
    assert [c for c, _ in grid["rows"]] == ["Total", "S1", "S2", "S3", "S4"]

    def listed(section) -> list[tuple[str, str]]:
        frames = [b.frame for b in section.blocks if isinstance(b, TableBlock)]
        return [cell for cell in frames[-1].index]

    rank = {code: k for k, code in enumerate(["Total", "S1", "S2", "S3", "S4"])}
    for section in (rules.to_report(), protected.to_report(),
                    audit(protected.table).to_report()):
        cells = listed(section)
        assert len(cells) >= 2
        keys = [(rank[s], ["Total", "R1", "R2"].index(r)) for s, r in cells]
        assert keys == sorted(keys), section.title
