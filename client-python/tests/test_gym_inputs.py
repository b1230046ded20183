"""ccscope.gym's checks of what a user passes; against a real server."""

from __future__ import annotations

import pytest

pytest.importorskip("gymnasium")

from ccscope.gym import CCEnv, CCVectorEnv  # noqa: E402

pytestmark = pytest.mark.server


# -- interval -----------------------------------------------------------------


@pytest.mark.parametrize("interval", ["0s", "0ms", "-10ms"])
@pytest.mark.parametrize("make", [CCEnv, lambda **kw: CCVectorEnv(2, **kw)], ids=["CCEnv", "CCVectorEnv"])
def test_an_interval_of_zero_or_less_is_refused(client, make, interval):
    # A zero interval never advanced the clock: the episode never ended.
    with pytest.raises(ValueError, match=r"interval is '.*': it must be above zero"):
        make(scenario="p-rtr-p", interval=interval, client=client)
