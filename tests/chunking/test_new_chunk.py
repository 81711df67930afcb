"""``types.new_chunk`` builds the chunkers' chunks without the frozen dataclass's per-field
``object.__setattr__``: what it returns must be a ``Chunk`` in every way a caller can tell."""
import copy
import dataclasses
import pickle

import pytest

from chunkwise.types import Chunk, new_chunk

FULL = (3, 10, 20, "body text", 7, "sentence", "Source: t\nbody text", ("A", "B"), 2, "table", True,
        ("char_split",), (1, 4), 5, 6)


@pytest.mark.parametrize("n", [7, 9, 13, 15])  # the required fields only, some defaults, every field
def test_it_is_the_chunk_the_constructor_makes(n):
    fast, slow = new_chunk(*FULL[:n]), Chunk(*FULL[:n])
    assert type(fast) is Chunk
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert dataclasses.asdict(fast) == dataclasses.asdict(slow) and fast.to_dict() == slow.to_dict()
    assert pickle.loads(pickle.dumps(fast)) == slow and copy.deepcopy(fast) == slow
    assert dataclasses.replace(fast, index=9) == dataclasses.replace(slow, index=9)


def test_it_is_frozen():
    chunk = new_chunk(*FULL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.size = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del chunk.text  # type: ignore[misc]


def test_it_checks_its_arguments_as_the_constructor_does():
    with pytest.raises(TypeError):
        new_chunk(*FULL[:6])  # embed_text missing
    with pytest.raises(TypeError):
        new_chunk(*FULL, None)  # one too many


def test_the_builder_follows_the_fields_of_chunk():
    from chunkwise import types

    assert [f.name for f in dataclasses.fields(types._ChunkBuilder)] == [f.name for f in dataclasses.fields(Chunk)]
    assert [f.default for f in dataclasses.fields(types._ChunkBuilder)] == [f.default for f in dataclasses.fields(Chunk)]
