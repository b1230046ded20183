"""Requests the client refuses before sending them: over the server's message limit."""

from __future__ import annotations

import ccscope
import pytest
from ccscope import errors
from ccscope._server import LocalServer
from ccscope.transport import FakeTransport
from fakeserver import FakeServer

LIMIT = 64 * 1024


class _LimitedServer(FakeServer):
    """The fake server, reporting a message limit in hello."""

    def __call__(self, req):
        out = super().__call__(req)
        if req["op"] == "hello":
            out[0]["result"]["limits"] = {"max_message_bytes": LIMIT}
        return out


def test_an_oversized_request_is_refused_before_it_is_sent():
    t = FakeTransport(_LimitedServer())
    with ccscope.Client(t, timeout=2) as c:
        sent = len(t.sent)
        with pytest.raises(errors.TooLarge, match=rf"message of \d+ bytes exceeds the limit of {LIMIT}.*'open'"):
            c.open({"name": "x"}, files={"big.trace": "1\n" * LIMIT})
        assert len(t.sent) == sent, "the oversized request went out"
        with pytest.raises(errors.TooLarge):
            c.call_many([("stats", {}), ("open", {"config": {"pad": "x" * LIMIT}})])
        assert len(t.sent) == sent, "call_many sent part of a batch it refused"
        assert not c.closed
        assert c.stats() == {"sessions": 1}


@pytest.mark.server
def test_a_request_past_4x_the_limit_keeps_the_connection(binary_env):
    # Beyond 4× its limit the server closes the connection (1009) and every
    # session on it; the client refuses such a request itself, as the server
    # refuses a smaller one, and the session opened before it goes on.
    server = LocalServer(extra_args=("--max-message-bytes", str(LIMIT)))
    try:
        with ccscope.connect(server.url) as c:
            assert c.limits["max_message_bytes"] == LIMIT
            with c.open("pump", set={"runtime.duration": "1s"}) as s:
                cfg = dict(s.config)
                cfg["links"][1]["ab"]["trace"] = {"file": "big.trace"}
                for size in (2 * LIMIT, 5 * LIMIT):  # the server's refusal, then the client's
                    with pytest.raises(errors.TooLarge, match=rf"exceeds the limit of {LIMIT}.*big.trace"):
                        c.open(cfg, files={"big.trace": "1\n" * (size // 2)})
                    assert not c.closed
                assert s.step("100ms").sim_time_ps == 10**11
    finally:
        server.stop()
