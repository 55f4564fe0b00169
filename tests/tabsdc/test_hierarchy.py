import pandas as pd
import pytest

from tabsdc import Hierarchy, HierarchyError


def nace_levels():
    return pd.DataFrame(
        {"A10": ["BE", "BE", "BE", "FZ"], "A21": ["B", "C", "C", "F"],
         "A88": ["05", "10", "11", "41"]}
    )


def test_from_levels_depth_first_order_and_relations():
    h = Hierarchy.from_levels(nace_levels())
    assert h.codes == ("Total", "BE", "B", "05", "C", "10", "11", "FZ", "F", "41")
    assert h.children("Total") == ("BE", "FZ")
    assert h.children("C") == ("10", "11")
    assert h.leaves == ("05", "10", "11", "41")
    assert h.parent_codes == ("Total", "BE", "B", "C", "FZ", "F")
    assert [h.depth(c) for c in ("Total", "BE", "C", "11")] == [0, 1, 2, 3]
    frame = h.to_frame()
    assert frame["depth"].tolist() == [0, 1, 2, 3, 2, 3, 3, 1, 2, 3]


def test_from_levels_collapses_a_code_repeated_at_the_next_level():
    h = Hierarchy.from_levels(pd.DataFrame({"l1": ["X", "Y"], "l2": ["X", "Y1"]}))
    assert h.codes == ("Total", "X", "Y", "Y1")


def test_code_with_two_parents_is_named():
    levels = pd.DataFrame({"l1": ["A", "B"], "l2": ["a1", "a1"]})
    with pytest.raises(HierarchyError, match="'a1' has two parents"):
        Hierarchy.from_levels(levels)


def test_prefix_codes_nuts():
    h = Hierarchy.from_prefixes(["FR105", "FR101", "FR213", "FR2"], lengths=(3, 4, 5))
    assert h.children("Total") == ("FR1", "FR2")
    assert h.children("FR1") == ("FR10",)
    assert h.children("FR10") == ("FR105", "FR101")
    assert h.children("FR2") == ("FR21",)
    assert h.leaves == ("FR105", "FR101", "FR213")
    with pytest.raises(HierarchyError, match="'FR1234' has length 6"):
        Hierarchy.from_prefixes(["FR1234"], lengths=(3, 4, 5))


def test_paths_and_parent_child_agree():
    a = Hierarchy.from_paths(["FR1>FR10>FR101", "FR1>FR10>FR102", "FR2>FR21"])
    b = Hierarchy.from_parent_child(
        pd.DataFrame({"parent": ["Total", "FR1", "FR10", "FR10", "Total", "FR2"],
                      "child": ["FR1", "FR10", "FR101", "FR102", "FR2", "FR21"]})
    )
    assert a.codes == b.codes
    assert dict(a.parents) == dict(b.parents)


def test_parent_child_needs_one_root():
    with pytest.raises(HierarchyError, match="exactly one root"):
        Hierarchy.from_parent_child({"a": "T1", "b": "T2"})


def test_cycle_is_reported():
    with pytest.raises(HierarchyError):
        Hierarchy({"a": "b", "b": "a"}, root="Total")


def test_ancestor_pairs_cover_every_code_and_its_ancestors():
    h = Hierarchy.from_levels(nace_levels())
    code, ancestor = h.ancestor_pairs()
    pairs = {(h.codes[c], h.codes[a]) for c, a in zip(code, ancestor, strict=True)}
    assert ("11", "C") in pairs and ("11", "BE") in pairs and ("11", "Total") in pairs
    assert ("11", "11") in pairs and ("11", "B") not in pairs
    assert len(pairs) == sum(h.depth(c) + 1 for c in h.codes)
