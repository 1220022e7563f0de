# kind: vectorizable
# family: per-row-normalize
# origin: tutorial-style unit vectors, appended then stacked
# results: unit
# tags: function-param
import torch


def to_unit_vectors(vectors):
    out = []
    for v in vectors:
        out.append(v / v.norm())
    return torch.stack(out)


vectors = torch.randn(500, 3)
unit = to_unit_vectors(vectors)
# ---- vectorized ----
import torch


def to_unit_vectors(vectors):
    return vectors / vectors.norm(dim=1, keepdim=True)


vectors = torch.randn(500, 3)
unit = to_unit_vectors(vectors)
