"""Tables from dask data frames (Parquet and CSV, several partitions, a 2-worker cluster)
are the tables the pandas build gives."""

import numpy as np
import pandas as pd
import pytest

from tabsdc import Hierarchy, HierarchyError, InputError, Table, TableSet, TabSDCError
from tabsdc._microdata import estimate_build

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as connected:
        yield connected


def records(n: int = 3000, seed: int = 7) -> pd.DataFrame:
    """Skewed records: a few big activities, many small ones; integer values (exact sums)."""
    rng = np.random.default_rng(seed)
    activity = rng.choice([f"{s}{d}" for s in "ABC" for d in "123"], n,
                          p=np.array([30, 20, 10, 8, 8, 8, 6, 5, 5]) / 100)
    return pd.DataFrame({
        "activity": activity,
        "region": rng.choice(["N1", "N2", "S1", "S2", "S3"], n),
        "size": rng.choice(["small", "mid", "large"], n, p=[0.7, 0.2, 0.1]),
        "holding": rng.integers(0, n // 3, n),
        "turnover": np.floor(rng.pareto(1.1, n) * 100) - 20,  # a few negative
        "weight": rng.choice([1.0, 2.0, 4.0], n),
    })


HIERARCHIES = {
    "activity": Hierarchy.from_prefixes([f"{s}{d}" for s in "ABC" for d in "123"],
                                        lengths=(1, 2)),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    data = records()
    folder = tmp_path_factory.mktemp("microdata")
    dd.from_pandas(data, npartitions=5).to_parquet(folder / "parquet")
    dd.from_pandas(data, npartitions=4).to_csv(folder / "csv" / "part-*.csv", index=False)
    return data, folder


def assert_same_table(built: Table, expected: Table) -> None:
    assert built.hierarchies == expected.hierarchies
    pd.testing.assert_frame_equal(built.cells, expected.cells)
    assert (built.A != expected.A).nnz == 0


@pytest.mark.parametrize("options", [
    {"value": "turnover"},
    {"value": "turnover", "holding": "holding", "weight": "weight"},
    {"value": None},
    {"value": "turnover", "holding": "holding", "negative": "absolute", "top": 2},
    {"value": "turnover", "keep_empty": False, "hierarchies": HIERARCHIES},
])
def test_parquet_build_equals_the_pandas_build(client, files, options):
    data, folder = files
    options = dict(options)
    value = options.pop("value")
    frame = dd.read_parquet(folder / "parquet")
    assert frame.npartitions == 5
    lines = []
    built = Table.from_microdata(frame, ["activity", "region", "size"], value,
                                 progress=lines.append, **options)
    expected = Table.from_microdata(data, ["activity", "region", "size"], value, **options)
    assert_same_table(built, expected)
    assert lines[0].startswith("building up to ")
    assert lines[-1].startswith("partitions 5/5 aggregated")


def test_csv_build_with_holdings_equals_the_pandas_build(client, files):
    data, folder = files
    frame = dd.read_csv(folder / "csv" / "*.csv", dtype={"holding": "int64"})
    assert frame.npartitions == 4
    options = {"holding": "holding", "hierarchies": HIERARCHIES}
    assert_same_table(Table.from_microdata(frame, ["activity", "size"], "turnover", **options),
                      Table.from_microdata(data, ["activity", "size"], "turnover", **options))


def test_float_values_agree_to_rounding(client):
    data = records(seed=3).assign(turnover=lambda d: d["turnover"] * np.pi)
    built = Table.from_microdata(dd.from_pandas(data, npartitions=6), ["region", "size"],
                                 "turnover", holding="holding")
    expected = Table.from_microdata(data, ["region", "size"], "turnover", holding="holding")
    pd.testing.assert_frame_equal(built.cells, expected.cells, check_exact=False, rtol=1e-12)


def test_linked_set_from_dask_equals_the_pandas_set(client, files):
    data, folder = files
    dims = [["activity", "region"], ["activity", "size"], ["region", "size"]]
    built = TableSet.from_microdata(dd.read_parquet(folder / "parquet"), dims, "turnover",
                                    hierarchies=HIERARCHIES, holding="holding")
    expected = TableSet.from_microdata(data, dims, "turnover", hierarchies=HIERARCHIES,
                                       holding="holding")
    assert_same_table(built.combined, expected.combined)
    for table, alone in zip(built.tables, expected.tables, strict=True):
        assert_same_table(table, alone)


def test_bad_records_in_a_partition_are_named(client):
    data = records(600)
    data.loc[517, "activity"] = "B"  # a total of the activity hierarchy, in partition 4
    frame = dd.from_pandas(data, npartitions=4)
    with pytest.raises(HierarchyError, match="code 'B' of dimension 'activity' is a total"):
        Table.from_microdata(frame, ["activity"], "turnover", hierarchies=HIERARCHIES)
    data = records(600).astype({"turnover": object})
    data.loc[433, "turnover"] = "n/a"
    with pytest.raises(InputError, match="'turnover' has a missing or non-numeric value at "
                                         "row 433: 'n/a'"):
        Table.from_microdata(dd.from_pandas(data, npartitions=3), ["region"], "turnover")


def test_a_failing_cluster_is_reported_as_such():
    data = records(300)
    frame = dd.from_pandas(data, npartitions=3).map_partitions(
        lambda part: part.assign(turnover=part["turnover"].map(_lost_worker)),
        meta=data)
    with pytest.raises(TabSDCError, match=r"the dask computation failed while aggregating "
                                          r"\(partitions 1-3 of 3\): ConnectionError"):
        Table.from_microdata(frame, ["region"], "turnover", hierarchies={
            "region": Hierarchy.flat(["N1", "N2", "S1", "S2", "S3"])})


def _lost_worker(value):
    raise ConnectionError("worker lost")


def test_a_table_too_big_for_memory_is_refused_before_the_build():
    codes = [f"c{i}" for i in range(3000)]
    data = pd.DataFrame({d: codes[:5] for d in "pqrs"} | {"v": 1.0})
    hierarchies = {d: Hierarchy.flat(codes) for d in "pqrs"}
    size = estimate_build(hierarchies)
    assert size["cells"] == 3001.0 ** 4
    assert size["relations"] == 4 * 3001.0 ** 3
    with pytest.raises(InputError, match="building up to 81,108,054,012,001 cells"):
        Table.from_microdata(data, list("pqrs"), "v", hierarchies=hierarchies)
    with pytest.raises(InputError, match="keep_empty=False"):
        Table.from_microdata(dd.from_pandas(data, npartitions=2), list("pqrs"), "v",
                             hierarchies=hierarchies)
