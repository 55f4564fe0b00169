"""Deterministic skewed hierarchical microdata for the large-table benchmarks.

Each instance is a frame of records: hierarchical sector codes (``s1 > s2 > s3``), region
codes (``r1 > r2``), flat classifications (``size``, ``legal`` and, for the 5-D instance,
``export``) and a magnitude ``val`` with a Pareto tail (shape 1.3). Category frequencies are
Zipf-like (a few big categories, many small ones), so the cross product of all codes holds
many small and empty cells, as real business tables do. The table crosses ``s3`` (levels
``s1, s2, s3``), ``r2`` (levels ``r1, r2``) and the flat dimensions; the rules are p% with
p = 15 and minimum frequency 3 (every record its own contributor).

The draws are those of ``make_instances.py`` in ``../shared/data/scale/`` (same seeds, same
order), so ``4d_100k`` and ``4d_1m`` are the very records GaussSuppression was run on there;
the codes are built from integer draws by lookup (categoricals), not joined row by row, so
the 3,000,000 records of ``4d_1m`` take seconds.

Examples
--------
>>> frame = records("4d_100k", n=1000)
>>> list(frame.columns)
['s1', 's2', 's3', 'r1', 'r2', 'size', 'legal', 'val']
>>> frame["s3"].iloc[0][:2] == frame["s2"].iloc[0][:2]
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules

__all__ = ["INSTANCES", "Instance", "records", "build_table"]


@dataclass(frozen=True)
class Instance:
    """Records, seed, branching of the sector (3 levels) and region (2 levels) hierarchies
    and the number of codes of each flat dimension (``size``, ``legal``, ...)."""

    n_records: int
    seed: int
    sector: tuple[int, int, int]
    region: tuple[int, int]
    flat: tuple[int, ...]


#: The instances: ``4d_5k`` (5,184 cells, 1,059 primaries) and ``4d_20k`` (21,840 cells,
#: 5,860 primaries) are small 4-D ones whose GaussSuppression patterns ``bench_audit.py``
#: audits (``data/gausssuppression/``); ``4d_100k`` (126,000 cells, 29,739 primaries: 26 %
#: of the non-empty cells) and ``4d_1m`` (984,984 cells, 289,617 primaries: 38 %) as in
#: ``../shared/data/scale/``; ``5d_130k`` (129,792 cells, 28,245 primaries: 24 %) adds a
#: flat ``export`` dimension; ``4d_40k`` (39,680 cells, 11,302 primaries) is a smaller
#: 4-D one for quick runs.
INSTANCES = {
    "4d_5k": Instance(8_000, 5, (2, 3, 3), (3, 4), (3, 2)),
    "4d_20k": Instance(30_000, 21, (3, 4, 3), (4, 4), (4, 3)),
    "4d_40k": Instance(60_000, 11, (3, 4, 4), (5, 5), (4, 3)),
    "4d_100k": Instance(500_000, 101, (4, 5, 4), (7, 6), (5, 3)),
    "4d_1m": Instance(3_000_000, 202, (5, 5, 5), (9, 8), (10, 6)),
    "5d_130k": Instance(200_000, 303, (3, 4, 3), (5, 4), (5, 3, 3)),
}

#: Zipf exponents of the flat dimensions, in order (``size``, ``legal``, ``export``).
FLAT = (("size", "Z", 0.8), ("legal", "L", 0.5), ("export", "E", 0.5))


def _zipf_codes(rng: np.random.Generator, k: int, n: int, exponent: float) -> np.ndarray:
    """``n`` draws from ``k`` categories with probabilities ``~ 1 / rank^exponent``, the ranks
    shuffled (the big categories are not the first codes)."""
    p = 1.0 / np.arange(1, k + 1) ** exponent
    p = rng.permutation(p / p.sum())
    return rng.choice(k, n, p=p)


def _level_codes(prefix: str, draws: list[np.ndarray]) -> list[pd.Categorical]:
    """Codes of each level: the prefix followed by the digits of the draws down to it."""
    out = []
    number = np.zeros(len(draws[0]), dtype=np.int64)
    for depth, draw in enumerate(draws):
        number = number * 10 + draw  # branching <= 10, so one digit per level
        width = depth + 1
        labels = np.char.add(prefix, np.char.zfill(np.arange(10**width).astype(str), width))
        used, inverse = np.unique(number, return_inverse=True)
        out.append(pd.Categorical.from_codes(inverse, labels[used]))
    return out


def records(name: str, n: int | None = None) -> pd.DataFrame:
    """The records of an instance (``n`` overrides the number of records, for tests)."""
    spec = INSTANCES[name]
    n = spec.n_records if n is None else n
    rng = np.random.default_rng(spec.seed)
    sector = [_zipf_codes(rng, k, n, 1.1) for k in spec.sector]
    region = [_zipf_codes(rng, k, n, 1.1) for k in spec.region]
    columns: dict[str, object] = {}
    for level, codes in enumerate(_level_codes("S", sector), start=1):
        columns[f"s{level}"] = codes
    for level, codes in enumerate(_level_codes("R", region), start=1):
        columns[f"r{level}"] = codes
    for (column, prefix, exponent), k in zip(FLAT, spec.flat, strict=False):
        columns[column] = _level_codes(prefix, [_zipf_codes(rng, k, n, exponent)])[0]
    columns["val"] = np.round(rng.pareto(1.3, n) * 100 + 1, 2)
    return pd.DataFrame(columns)


def build_table(frame: pd.DataFrame) -> Table:
    """The instance's table with p% (p = 15) and frequency (3) primaries."""
    flat = [c for c, _, _ in FLAT if c in frame.columns]
    hierarchies = {
        "s3": Hierarchy.from_levels(frame[["s1", "s2", "s3"]].drop_duplicates()),
        "r2": Hierarchy.from_levels(frame[["r1", "r2"]].drop_duplicates()),
    }
    table = Table.from_microdata(frame.astype({c: str for c in ["s3", "r2", *flat]}),
                                 ["s3", "r2", *flat], "val", hierarchies=hierarchies, top=2)
    return apply_rules(table, [PPercentRule(15), FrequencyRule(3)]).table
