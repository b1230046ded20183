"""signals() and subscribe() filters: one a table has no column for is refused, a signal never seen warned of."""

from __future__ import annotations

import warnings

import pytest
from ccscope.tables import check_filters

pytestmark = pytest.mark.server


def test_check_filters_names_the_table_and_the_filter():
    with pytest.raises(ValueError, match=r"the queue table has no flow column to filter by flows=; flows= applies to "
                                         r"flows, signals, events, delivery"):  # fmt: skip
        check_filters("queue", flows=["f0"])
    with pytest.raises(ValueError, match=r"the flows table has no signal column to filter by signals=; .* signals$"):
        check_filters("flows", signals=["bic_target"])
    with pytest.raises(ValueError, match=r"the tables queue, link have no flow column"):
        check_filters(["queue", "link"], flows=["f0"])
    check_filters(["flows", "queue"], flows=["f0"])  # it selects flows rows
    check_filters("signals", flows=["f0"], signals=["bw"])
    check_filters("nope", flows=["f0"])  # the server says there is no such table


def test_a_filter_that_does_not_apply_is_refused_and_a_signal_never_seen_warned_of(client):
    with client.open("p-rtr-p", set={"trace.detail": "change", "runtime.duration": "1s"}) as s:
        s.step("300ms")
        with pytest.raises(ValueError, match="the queue table has no flow column"):
            s.signals("queue", flows=["f0"])
        with pytest.raises(ValueError, match="the flows table has no signal column"):
            s.signals("flows", signals=["bogus"])
        with pytest.raises(ValueError, match="the link table has no flow column"):
            s.subscribe(["link"], flows=["f0"])
        with pytest.warns(UserWarning, match=r"no rows of 'bogus'; the signals recorded so far of flows f0 are "
                                             r"ack_cnt, bic_target, .*tcp_cwnd"):  # fmt: skip
            assert s.signals("signals", flows=["f0"], signals=["bic_target", "bogus"]).num_rows > 0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            t = s.signals("signals", signals=["bic_target"])
            assert set(t["signal"].to_pylist()) == {"bic_target"}
            assert s.signals("queue").num_rows > 0 and s.signals("flows", flows=["f0"]).num_rows > 0
