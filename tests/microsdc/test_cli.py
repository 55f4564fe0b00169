"""The ``microsdc`` command line: results equal the library's, files as promised, user errors
end with exit status 2 and a message naming the file or column."""

import json

import numpy as np
import pandas as pd
import pytest

from microsdc._datasets import load_tarragona
from microsdc._risk import disclosure_risk
from microsdc.cli import main
from microsdc.masking import mdav, rank_swap
from microsdc.utility import information_loss

from .conftest import MICRODATA

NUMERIC = ["PAID.UP.CAPITAL", "SHORT.TERM.DEBT", "SALES"]


@pytest.fixture()
def original_csv(tmp_path):
    data = load_tarragona().iloc[:200].copy()
    data.insert(0, "id", [f"c{i:04d}" for i in range(len(data))])  # text column, copied as is
    path = tmp_path / "original.csv"
    data.to_csv(path, index=False)
    return path


def test_mask_then_compare_equals_the_library(original_csv, tmp_path, capsys):
    masked_csv, out_json, out_html = (tmp_path / n for n in ("m.csv", "c.json", "c.html"))
    assert main(["mask", str(original_csv), "--method", "mdav", "--k", "4",
                 "--vars", *NUMERIC, "--out", str(masked_csv)]) == 0
    original, masked = pd.read_csv(original_csv), pd.read_csv(masked_csv)
    assert masked.columns.tolist() == original.columns.tolist()
    untouched = [c for c in original.columns if c not in NUMERIC]
    pd.testing.assert_frame_equal(masked[untouched], original[untouched])
    np.testing.assert_array_equal(masked[NUMERIC], mdav(original[NUMERIC], k=4))

    assert main(["compare", str(original_csv), str(masked_csv), "--vars", *NUMERIC,
                 "--seed", "5", "--json", str(out_json), "--html", str(out_html)]) == 0
    result = json.loads(out_json.read_text())
    utility = information_loss(original[NUMERIC].astype(float), masked[NUMERIC], seed=5)
    risk = disclosure_risk(original[NUMERIC].astype(float), masked[NUMERIC])
    for key in ("n", "p", "MAE", "MSE", "IL1", "IL1s", "brMAE", "brMSE", "eigen"):
        assert result[key] == pytest.approx(utility.to_dict()[key], rel=1e-12)
    assert set(result["PIL"]) >= {"Q", "m1", "m2", "m11", "r", "overall"}
    assert result["PIL"]["overall"] == pytest.approx(utility.pil.overall, rel=1e-12)
    assert {k: result["risk"][k] for k in risk.measures()} == pytest.approx(risk.measures(),
                                                                           rel=1e-12)
    assert result["risk"]["status"] == result["status"] == "computed"
    assert result["risk"]["DBRL"] <= 0.25 + 1e-12  # groups of at least 4 identical records
    page = out_html.read_text()
    assert "Information loss" in page and "Disclosure risk" in page and "<img" in page
    assert "DBRL" in capsys.readouterr().out


def test_compare_reproduces_sdcmicro_on_its_own_output(tmp_path, capsys):
    # sdcMicro 5.8.1 on (Tarragona, its MDAV k = 3 output): dRisk 0.0455635491606715,
    # dUtility IL1s 1092.09648606563 (a sum over the 834 x 13 cells), eigen
    # 4.23229386541742 (tests/data/microsdc/README.md)
    original = tmp_path / "Tarragona.csv"
    load_tarragona().to_csv(original, index=False)
    out = tmp_path / "c.json"
    assert main(["compare", str(original), str(MICRODATA / "Tarragona__mdav_k3.csv"),
                 "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["risk"]["SDID"] == pytest.approx(0.0455635491606715, abs=1e-12)
    assert result["IL1s"] * 834 * 13 == pytest.approx(1092.09648606563, rel=1e-12)
    assert result["eigen"] == pytest.approx(4.23229386541742, rel=1e-12)
    assert "SDID      0.0456" in capsys.readouterr().out


@pytest.mark.parametrize("method, option", [
    ("noise", ["--noise", "20"]), ("correlated-noise", ["--noise", "20"]),
    ("rankswap", ["--p", "10"])])
def test_random_methods_are_reproducible(original_csv, tmp_path, method, option):
    outputs = []
    for run in range(2):
        out = tmp_path / f"{method}{run}.csv"
        assert main(["mask", str(original_csv), "--method", method, *option, "--seed", "3",
                     "--vars", *NUMERIC, "--out", str(out)]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    masked, original = pd.read_csv(tmp_path / f"{method}0.csv"), pd.read_csv(original_csv)
    assert (masked[NUMERIC] != original[NUMERIC]).to_numpy().mean() > 0.5
    if method == "rankswap":
        expected = rank_swap(original[NUMERIC].astype(float), 10, seed=3)
        np.testing.assert_array_equal(masked[NUMERIC], expected)


def test_mask_without_vars_masks_every_numeric_column_and_copies_the_others(
        original_csv, tmp_path, capsys):
    # original_csv: a text id column before Tarragona's 13 integer columns
    original = pd.read_csv(original_csv)
    numeric = [c for c in original.columns if c != "id"]
    lines = {}
    for method in ("rankswap", "mdav"):
        out = tmp_path / f"{method}.csv"
        assert main(["mask", str(original_csv), "--method", method, "--seed", "1",
                     "--out", str(out)]) == 0
        assert "copied as they are: id" in capsys.readouterr().out
        masked = pd.read_csv(out)
        assert masked["id"].tolist() == original["id"].tolist()
        expected = {"rankswap": rank_swap(original[numeric].astype(float), 15, seed=1),
                    "mdav": mdav(original[numeric].astype(float), k=3)}[method]
        np.testing.assert_allclose(masked[numeric], expected, rtol=1e-12)
        lines[method] = out.read_text().splitlines()
    # rank swapping exchanges whole numbers: written as integers, never "3.0"
    assert not any("." in line for line in lines["rankswap"][1:])
    # MDAV's group means are written with their decimals where they are not whole
    assert any("." in line for line in lines["mdav"][1:])


@pytest.mark.slow
def test_study_on_a_csv(tmp_path, capsys):
    data = pd.DataFrame(np.exp(np.random.default_rng(2).standard_normal((90, 3))),
                        columns=["a", "b", "c"])
    path = tmp_path / "data.csv"
    data.to_csv(path, index=False)
    html, out_json = tmp_path / "s.html", tmp_path / "s.json"
    assert main(["study", "--data", str(path), "--quick", "--replications", "1",
                 "--seed", "1", "--html", str(html), "--json", str(out_json)]) == 0
    report = json.loads(out_json.read_text())
    assert report["metadata"]["records"] == 90 and report["metadata"]["quick"] is True
    assert report["sections"][0]["title"] == "Information-loss study: data.csv"
    assert "<img" in html.read_text()
    assert "Spearman" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["mask", "{dir}/absent.csv", "--method", "mdav", "--out", "{dir}/o.csv"],
     "{dir}/absent.csv: no such file"),
    (["mask", "{orig}", "--method", "mdav", "--vars", "id", "--out", "{dir}/o.csv"],
     "column 'id' of {orig} is not numeric ('c0000' on line 2); choose columns with --vars"),
    (["mask", "{words}", "--method", "mdav", "--out", "{dir}/o.csv"],
     "{words} has no numeric column to mask; name columns with --vars"),
    (["mask", "{orig}", "--method", "mdav", "--vars", "SALES", "TAXES", "--out", "{dir}/o.csv"],
     "column 'TAXES' is not in {orig}"),
    (["mask", "{orig}", "--method", "mdav", "--k", "0", "--vars", "SALES",
      "--out", "{dir}/o.csv"], "k must be a whole number >= 1"),
    (["mask", "{holes}", "--method", "noise", "--out", "{dir}/o.csv"],
     "column 'b' of {holes} has a missing value ('NA' on line 3)"),
    (["compare", "{orig}", "{holes}", "--vars", "SALES", "--json", "{dir}/c.json"],
     "column 'SALES' is not in {holes}"),
    (["study", "--data", "{holes}", "--html", "{dir}/s.html", "--json", "{dir}/s.json"],
     "column 'b' of {holes} has a missing value"),
    (["mask", "{orig}", "--method", "mdav", "--vars", "SALES", "--out", "{dir}/no/o.csv"],
     "the folder {dir}/no does not exist (create it, or give --mkdir)"),
    # the line of the file: blank lines and line breaks inside quotes counted
    (["mask", "{infinite}", "--method", "noise", "--vars", "b", "--out", "{dir}/o.csv"],
     "column 'b' of {infinite} has an infinite value ('-inf' on line 5)"),
    (["compare", "{infinite}", "{infinite}", "--vars", "a", "--json", "{dir}/c.json"],
     "column 'a' of {infinite} is not numeric ('x' on line 6)"),
    # without --vars a column of numbers with a word among them is refused, not copied
    (["mask", "{infinite}", "--method", "noise", "--out", "{dir}/o.csv"],
     "column 'a' of {infinite} is not numeric ('x' on line 6)"),
    (["mask", "{header}", "--method", "mdav", "--out", "{dir}/o.csv"],
     "{header} has a header but no records"),
])
def test_user_errors_exit_2_without_traceback(original_csv, tmp_path, capsys, argv, message):
    holes = tmp_path / "holes.csv"
    holes.write_text("a,b\n1,2\n3,NA\n5,6\n")
    infinite = tmp_path / "infinite.csv"
    infinite.write_text('a,b,note\n1,2,"two\nlines"\n\n3,-inf,c\nx,5,d\n')
    header = tmp_path / "header.csv"
    header.write_text("a,b\n\n")
    words = tmp_path / "words.csv"
    words.write_text("name,town\nann,Reus\nbob,Valls\n")
    names = {"dir": tmp_path, "orig": original_csv, "holes": holes, "infinite": infinite,
             "header": header, "words": words}
    assert main([a.format(**names) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message.format(**names) in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_bad_option_is_an_argparse_error(original_csv):
    with pytest.raises(SystemExit) as stop:
        main(["mask", str(original_csv), "--method", "shuffle", "--out", "x.csv"])
    assert stop.value.code == 2
