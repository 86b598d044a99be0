"""One table of tensor dtypes (tracekit.traces.schema.DTYPES): the collectives' bytes per element, the message
dtype of torch 2.0 collectives read from their input shapes, and the op models' element sizes all come from it."""

from __future__ import annotations

import msgspec

from tracekit.analyses import op_models
from tracekit.traces import schema
from tracekit.traces.decode import shape_message


def _raw(v: object) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(v))


def test_every_spelling_of_a_dtype_has_its_size() -> None:
    for name, size, spelled, cpps in schema.DTYPES:
        assert schema.DTYPE_BYTES[name] == schema.DTYPE_BYTES[spelled] == schema.DTYPE_BYTES[spelled.lower()] == size
        for cpp in cpps:
            assert schema.SHAPE_DTYPES[cpp] == (name, size, spelled)
    # kineto's collective spellings keep their sizes
    assert (schema.DTYPE_BYTES["Float"], schema.DTYPE_BYTES["BFloat16"], schema.DTYPE_BYTES["Long"],
            schema.DTYPE_BYTES["Bool"], schema.DTYPE_BYTES["ComplexDouble"]) == (4, 2, 8, 1, 16)


def test_collective_message_from_shapes_knows_every_dtype() -> None:
    # the largest tensor input gives the message: 8 x 16 of a ROCm float8 (the decoder's own list lacked it)
    assert shape_message(_raw([[4], [8, 16]]), _raw(["float", "c10::Float8_e4m3fnuz"])) == (128, "Float8_e4m3fnuz")
    assert shape_message(_raw([[1024, 256]]), _raw(["c10::BFloat16"])) == (1024 * 256, "BFloat16")


def test_op_models_read_the_same_spellings() -> None:
    # an int64 index tensor spelled "long" (the models' own list knew only "long int")
    a = op_models.Args(dims=[[10, 20], [10]], types=["c10::Half", "long"], concrete=["", ""])
    assert a.tensors() == [([10, 20], 2), ([10], 8)] and a.dtype() == "float16"
