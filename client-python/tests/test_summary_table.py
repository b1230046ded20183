"""Summary.table: every field of every row, and only the summary's parts."""

from __future__ import annotations

import pytest
from ccscope.results import Summary

# rrul's shape: TCP flows with a CC's final state, then a ping flow with
# fields of its own and none of the TCP ones' values.
TCP = {"id": "up/0", "kind": "tcp", "goodput_bps": 10**6, "retransmits": 0,
       "cc_final": {"tcp_cwnd": 30.0, "bic_target": 29.0}}  # fmt: skip
TCP2 = {"id": "up/1", "kind": "tcp", "goodput_bps": 2 * 10**6, "retransmits": 1,
        "cc_final": {"bic_target": 28.0, "tcp_cwnd": 29.0}}  # fmt: skip
PING = {"id": "ping", "kind": "ping", "goodput_bps": None, "retransmits": None, "probes_sent": 6, "probes_received": 4}
QUEUE = {"link": "bottleneck", "dir": "ab", "drops": 3}


def test_columns_are_the_union_of_every_rows_fields_in_order():
    t = Summary({"flows": [TCP, TCP2, PING], "queues": [QUEUE]}).table("flows")
    assert t.column_names == ["id", "kind", "goodput_bps", "retransmits", "cc_final", "probes_sent", "probes_received"]
    assert t["probes_sent"].to_pylist() == [None, None, 6]
    assert t["retransmits"].to_pylist() == [0, 1, None]
    # A map is a struct whose fields do not depend on the order the server wrote them in.
    assert [f.name for f in t.schema.field("cc_final").type] == ["bic_target", "tcp_cwnd"]
    assert t["cc_final"].to_pylist()[1] == {"bic_target": 28.0, "tcp_cwnd": 29.0}
    assert Summary({"flows": [PING, TCP]}).table().column_names[:6] == [
        "id", "kind", "goodput_bps", "retransmits", "probes_sent", "probes_received"]  # fmt: skip


def test_an_unknown_part_is_refused_naming_the_parts():
    sm = Summary({"scenario": "rrul", "flows": [TCP], "queues": [QUEUE]})
    want = r"no part 'queue' \(did you mean 'queues'\?\); the parts are 'flows', 'queues'"
    with pytest.raises(ValueError, match=want):
        sm.table("queue")
    with pytest.raises(ValueError, match="no part 'scenario'"):
        sm.table("scenario")
    assert sm.table("queues")["drops"].to_pylist() == [3]
    # groups is a part a scenario without flow groups has no rows of.
    assert sm.table("groups").num_rows == 0


def test_a_notebook_shows_the_first_rows_of_a_long_list():
    # dumbbell-n at 1,024 flows has 4,098 queues: the cell shows 40 rows of
    # a list and says how many more table() has, while a short list is whole.
    flows = [dict(TCP, id=f"bulk/{i}") for i in range(100)]
    page = Summary({"scenario": "dumbbell-n", "flows": flows, "queues": [QUEUE]})._repr_html_()
    assert "<td>bulk/39</td>" in page and "<td>bulk/40</td>" not in page
    assert "… and 60 more flows: <code>summary.table('flows')</code> has all 100" in page
    assert "<td>bottleneck</td>" in page and "more queues" not in page
    assert Summary({"flows": flows}).table("flows").num_rows == 100
