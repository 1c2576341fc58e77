"""Seeded chunks: every item has its own generator (the SeedSequence child spawn gives), chunk boundaries
change no number, and a stop request ends the job between chunks."""
import numpy as np
import pytest

from explorer.chunks import Chunk, InProcess, item_generator, plan_chunks, root_seed, run_chunks, stack_rows
from explorer.progress import Cancelled, Hooks


def _normals(shared, chunk, root, scale):
    """Per-item rows: ``shared`` normal draws of each item's generator, times ``scale``."""
    return np.stack([scale * item_generator(root, chunk.group, b).normal(size=shared)
                     for b in range(chunk.start, chunk.stop)])


def test_item_generator_is_the_spawned_child():
    root = np.random.SeedSequence(42)
    children = np.random.SeedSequence(42).spawn(3)
    grandchild = children[2].spawn(5)[4]
    assert (item_generator(root, 2, 4).integers(0, 2**62, size=4).tolist()
            == np.random.default_rng(grandchild).integers(0, 2**62, size=4).tolist())


def test_plan_chunks_covers_each_group_without_crossing():
    chunks = plan_chunks([5, 0, 3], 2)
    assert [(c.group, c.start, c.stop) for c in chunks] == [(0, 0, 2), (0, 2, 4), (0, 4, 5), (2, 0, 2), (2, 2, 3)]
    assert [c.index for c in chunks] == list(range(5))
    with pytest.raises(ValueError, match="`chunk_size` must be a positive integer"):
        plan_chunks([3], 0)


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 100])
def test_chunk_size_changes_no_number(chunk_size):
    root = root_seed(7)
    one = run_chunks(_normals, 4, plan_chunks([10, 6], 100), root, (2.0,))
    chunks = plan_chunks([10, 6], chunk_size)
    many = run_chunks(_normals, 4, chunks, root, (2.0,))
    for group, reference in enumerate(one):
        np.testing.assert_array_equal(stack_rows(many, chunks, group), reference)


def test_root_seed_from_int_sequence_generator_and_none():
    assert root_seed(3).entropy == np.random.SeedSequence(3).entropy
    seq = np.random.SeedSequence(9)
    assert root_seed(seq) is seq
    a, b = root_seed(np.random.default_rng(1)), root_seed(np.random.default_rng(1))
    assert a.entropy == b.entropy                      # a Generator in the same state, the same root
    assert root_seed(None).entropy != root_seed(None).entropy
    with pytest.raises(ValueError, match="`rng` must be an int seed"):
        root_seed("seven")


class _Reversed(InProcess):
    """Completes the chunks last to first, as a cluster may."""

    def map_chunks(self, task, shared, chunks, root, args, should_stop):
        yield from reversed(list(super().map_chunks(task, shared, chunks, root, args, should_stop)))


def test_results_come_back_in_chunk_order_whatever_the_completion_order():
    chunks = plan_chunks([9], 2)
    seen = []
    forward = run_chunks(_normals, 3, chunks, root_seed(1), (1.0,))
    backward = run_chunks(_normals, 3, chunks, root_seed(1), (1.0,), executor=_Reversed(),
                          on_chunk=lambda chunk, rows: seen.append(chunk.index))
    assert seen == [4, 3, 2, 1, 0]
    np.testing.assert_array_equal(stack_rows(backward, chunks, 0), stack_rows(forward, chunks, 0))


def test_stop_request_cancels_between_chunks_and_counts_items():
    chunks = plan_chunks([10], 3)
    calls = iter([False, False, True])
    progress = []
    with pytest.raises(Cancelled, match="after 6 of 10 samples"):
        run_chunks(_normals, 2, chunks, root_seed(0), (1.0,),
                   hooks=Hooks(progress=lambda f, m: progress.append(str(m)), should_stop=lambda: next(calls)))
    assert progress == ["3/10 samples", "6/10 samples"]
    assert Chunk(0, 0, 3, 8).size == 5
