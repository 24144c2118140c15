"""``Variable.rank``: the longest path from a root, as nnabla defines it (values checked
against nnabla 1.39 by hand: x 0, relu(x) 1, sin(relu(x)) 2, relu(x) + sin(relu(x)) 3)."""
import nnabla as nn
import nnabla.functions as F


def test_rank_is_longest_path_from_a_root():
    x = nn.Variable((2, 3))
    a = F.relu(x)
    b = F.sin(a)
    c = a + b
    assert (x.rank, a.rank, b.rank, c.rank) == (0, 1, 2, 3)
    # the longest path counts, not the shortest: x -> c directly is one step
    d = F.add2(x, c)
    assert d.rank == 4


def test_rank_follows_rewire_on():
    x = nn.Variable((2,))
    y = F.sin(F.cos(F.relu(x)))
    z = nn.Variable((2,))
    w = F.relu(z)
    assert w.rank == 1
    z.rewire_on(y)
    assert w.rank == 4
