"""How the report's results become JSON values, on results made by hand, and the file ``--json`` writes."""

from __future__ import annotations

import json

from yacht_play.report.build import build_report
from yacht_play.report.json_document import json_value, save_json
from yacht_play.report.results import Estimate


def test_a_result_is_an_object_of_its_fields_in_order_leaving_out_only_a_marked_field_that_is_none():
    plain = {"mean": 1.5, "low": None, "high": None, "n": 4, "unit": "games", "note": None}
    assert json_value(Estimate(1.5, None, None, 4, "games")) == plain  # a note that is None keeps its key
    assert list(json_value(Estimate(1.5, None, None, 4, "games", players=3))) == [*plain, "players"]
    assert json_value(Estimate(1.5, None, None, 4, "games", players=3))["players"] == 3
    assert json_value(Estimate(1.5, None, None, 4, "games", players=0))["players"] == 0  # 0 is not None


def test_tuples_and_lists_become_arrays_of_json_values_and_the_rest_stays_as_it_is():
    figure = Estimate(0.5, 0.25, 0.75, 12, "decisions", "why")
    as_json = {"mean": 0.5, "low": 0.25, "high": 0.75, "n": 12, "unit": "decisions", "note": "why"}
    assert json_value((figure, [figure, 2])) == [as_json, [as_json, 2]]
    assert json_value([(1, "a")]) == [[1, "a"]] and json_value(()) == []
    assert json_value({"a": (1,)}) == {"a": (1,)} and json_value(None) is None
    assert json_value(Estimate) is Estimate  # a class is not a result


def test_the_json_file_is_indented_by_two_and_ends_its_last_line(tmp_path):
    save_json(tmp_path / "r.json", build_report([]))
    text = (tmp_path / "r.json").read_text()
    assert text.startswith('{\n  "schema": 1,\n  "') and text.endswith("\n}\n") and "\n    " in text
    assert json.loads(text)["games"] == 0
