"""What the codec encodes beyond msgpack's own types: numpy values, any mapping."""

from __future__ import annotations

import types

import ccscope
import pytest
from ccscope import codec

np = pytest.importorskip("numpy")


@pytest.mark.parametrize(
    "value, want",
    [
        (np.int64(3), 3),
        (np.uint8(200), 200),
        (np.float32(0.5), 0.5),
        (np.float64(0.25), 0.25),
        (np.bool_(True), True),
        (np.array(7), 7),  # a 0-d array
        (np.array([1, 2, 3]), [1, 2, 3]),
        (np.arange(4).reshape(2, 2), [[0, 1], [2, 3]]),
        ({"seeds": np.array([1, 2]), "p": [np.float64(0.01)]}, {"p": [0.01], "seeds": [1, 2]}),
        (types.MappingProxyType({"b": 1, "a": np.int32(2)}), {"a": 2, "b": 1}),
    ],
)
def test_numpy_values_and_mappings_encode_as_the_python_values_they_hold(value, want):
    got = codec.encode(value)
    assert got == codec.encode(want), f"encode({value!r}) = {got.hex()}, want that of {want!r}"
    assert codec.decode(codec.encode_request(1, "open", {"x": value}))["x"] == want


def test_a_value_the_codec_cannot_encode_names_its_argument():
    with pytest.raises(TypeError, match=r"open argument 'set': can not serialize 'set' object"):
        codec.encode_request(1, "open", {"scenario": "pump", "set": {"a", "b"}})


@pytest.mark.server
def test_open_takes_a_numpy_seed(client):
    with client.open("pump", seed=np.int64(3), set={"runtime.duration": np.array("1s")}) as s:
        assert (s.seed, s.horizon_ps) == (3, 10**12)
