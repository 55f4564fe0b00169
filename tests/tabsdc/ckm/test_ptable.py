"""p-tables: tau-ARGUS's sample files reproduced, the maximum-entropy rows against an
independent solver (scipy's SLSQP), the constraints on random parameters, the file format."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from tabsdc._errors import InputError
from tabsdc.ckm import build_ptable, read_ptable
from tests.conftest import DATA, examples

PTAB_FREQ = DATA / "ckm" / "ptab_freq.txt"
PTAB_SAVINGS = DATA / "ckm" / "ptab_savings_all.txt"


def entropy(p):
    return -float(np.sum(p * np.log(p)))


def slsqp_row(v, variance, lower, monotone, exact=False):
    """The row's problem solved by scipy's SLSQP, written here from the problem statement."""
    v = np.asarray(v, float)
    constraints = [{"type": "eq", "fun": lambda p: p.sum() - 1},
                   {"type": "eq", "fun": lambda p: v @ p},
                   {"type": "eq" if exact else "ineq",
                    "fun": (lambda p: v**2 @ p - variance) if exact
                    else (lambda p: variance - v**2 @ p)}]
    zero = np.flatnonzero(v == 0)
    if monotone and zero.size:
        constraints += [{"type": "ineq", "fun": lambda p, k=k: p[k + 1] - p[k]}
                        for k in range(int(zero[0]))]
    start = np.full(len(v), 1 / len(v))
    res = minimize(lambda p: np.sum(p * np.log(p)), start, jac=lambda p: np.log(p) + 1,
                   bounds=[(lb, 1) for lb in lower], constraints=constraints,
                   method="SLSQP", options={"ftol": 1e-12, "maxiter": 2000})
    assert res.success, res.message
    return res.x


def test_reproduces_tau_argus_sample_ptab_freq():
    """D=5, V=3, js=2, pstay=0.5: the same transitions, and every p_int_ub within one unit of
    the 8th decimal. The file comes from ptable's SLSQP stopped at xtol 1e-7: its symmetric
    last row is not symmetric in the 8th decimal, ours is."""
    ours = build_ptable(5, 3, js=2, pstay=0.5)
    ref = read_ptable(PTAB_FREQ)
    assert ours.frame[["i", "j", "v"]].values.tolist() == ref.frame[["i", "j", "v"]].values.tolist()
    assert np.abs(ours.upper_units - ref.upper_units).max() <= 1
    assert np.count_nonzero(ours.upper_units != ref.upper_units) <= 6
    assert np.abs(ours.frame["p"] - ref.frame["p"]).max() <= 1.01e-8
    last = ours.frame[ours.frame["i"] == 8].set_index("v")["p"]
    assert np.allclose(last.to_numpy(), last.to_numpy()[::-1], atol=1e-8)
    ref_last = ref.frame[ref.frame["i"] == 8].set_index("v")["p"]
    assert ref_last[-3] != ref_last[3]  # the file's own optimiser stopped early
    # entropy of every row at least the file's (ours is the optimum)
    for i in ours.rows[1:]:
        ours_p = ours.frame.loc[ours.frame["i"] == i, "p"].to_numpy()
        ref_p = ref.frame.loc[ref.frame["i"] == i, "p"].to_numpy()
        assert entropy(ours_p) >= entropy(ref_p) - 2e-7


def test_reproduces_tau_argus_sample_magnitude_ptable():
    ours = build_ptable(5, 1, kind="magnitude", step=2, icat=[1, 5])
    ref = read_ptable(PTAB_SAVINGS)
    assert ref.kind == "magnitude"
    assert np.allclose(ours.frame[["i", "j", "v"]], ref.frame[["i", "j", "v"]])
    assert np.abs(ours.upper_units - ref.upper_units).max() <= 4


@pytest.mark.parametrize(("D", "V", "js", "pstay", "rule"),
                         [(5, 3, 2, 0.5, "at-most"), (3, 1.5, 0, None, "at-most"),
                          (4, 2, 1, None, "exact"), (6, 5, 3, 0.3, "exact")])
def test_rows_agree_with_scipy_slsqp(D, V, js, pstay, rule):
    table = build_ptable(D, V, js=js, pstay=pstay, variance_rule=rule)
    for i in table.rows[1:]:
        row = table.frame[table.frame["i"] == i]
        v = row["v"].to_numpy(float)
        lower = np.where(v == 0, pstay or 1e-8, 1e-8)
        reference = slsqp_row(v, V, lower, True, exact=rule == "exact")
        assert np.abs(row["p"].to_numpy() - reference).max() < 2e-6, i
        assert entropy(row["p"].to_numpy()) >= entropy(reference) - 1e-6


@settings(max_examples=examples(5, 10))
@given(D=st.integers(2, 7), V=st.floats(0.8, 4.0), js=st.integers(0, 3),
       pstay=st.one_of(st.none(), st.floats(0.05, 0.6)))
@example(D=5, V=3.9953277756380405, js=0, pstay=None)  # a singular Newton system
@example(D=6, V=3.390626357399973, js=0, pstay=None)  # Newton steps that left sum(p) = 1
def test_every_row_keeps_the_constraints(D, V, js, pstay):
    try:
        table = build_ptable(D, V, js=js, pstay=pstay)
    except InputError:
        return  # a variance the noise values cannot carry is refused, as ptable does
    f = table.frame
    assert table.rows.max() == (D + js + 1 if js else D)
    assert f.loc[f["i"] == 0, ["j", "p"]].values.tolist() == [[0, 1.0]]
    assert not f["j"].isin(range(1, js + 1)).any()
    assert (f["j"] >= 0).all() and (f["v"].abs() <= D).all()
    for _, row in f[f["i"] > 0].groupby("i"):
        p, v = row["p"].to_numpy(), row["v"].to_numpy()
        assert table.upper_units[row.index[-1]] == 10**8
        assert abs(p @ v) < 1e-6 and p @ v**2 <= V + 1e-6
        assert (p >= 1e-8 - 1e-12).all()
        left = p[v <= 0]
        if (v == 0).any():
            assert (np.diff(left) >= -1e-7).all()  # monotone towards v = 0


def test_write_and_read_round_trip(tmp_path):
    table = build_ptable(5, 3, js=2, pstay=0.5)
    path = table.write(tmp_path / "p.txt")
    assert path.read_text().splitlines()[0] == "i;j;p;v;p_int_ub"
    back = read_ptable(path)
    assert (back.upper_units == table.upper_units).all()
    assert back.text() == table.text()
    magnitude = build_ptable(5, 1, kind="magnitude", step=2)
    assert magnitude.text().splitlines()[0] == "i;j;p;v;p_int_ub;type"
    assert read_ptable(magnitude.write(tmp_path / "m.txt")).text() == magnitude.text()


def test_the_file_text_is_tau_argus_s():
    assert build_ptable(5, 3, js=2, pstay=0.5).text().splitlines()[:6] == \
        PTAB_FREQ.read_text().splitlines()[:6]


def test_bad_files_and_parameters_name_the_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;0.5;-1;0.5\n1;1;0.4;0;0.9\n")
    with pytest.raises(InputError, match="line 4: the last p_int_ub of row i = 1"):
        read_ptable(bad)
    bad.write_text("i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;x;-1;0.5\n")
    with pytest.raises(InputError, match="line 3: p = 'x' is not a number"):
        read_ptable(bad)
    with pytest.raises(InputError, match="no such p-table"):
        read_ptable(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="variance V must be"):
        build_ptable(5, 0)
    with pytest.raises(InputError, match="unknown variance_rule"):
        build_ptable(5, 1, variance_rule="equal")
    with pytest.raises(InputError, match="too small"):
        build_ptable(5, 0.01, js=3)
