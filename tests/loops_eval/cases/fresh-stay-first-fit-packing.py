# kind: must-stay-loop
# family: data-dependent-branch
# origin: language-model pre-training data pipelines: first-fit packing of tokenized sequences into fixed-length rows
# why: which row a sequence goes into depends on the space every earlier placement left (a growing Python list searched with break); first-fit bin packing has no vectorized form
# tags: function-param nested python-data
import torch


def pack_sequences(lengths, max_len):
    space_left = []
    assignment = torch.empty(len(lengths), dtype=torch.long)
    for i, n in enumerate(lengths.tolist()):
        for b, space in enumerate(space_left):
            if n <= space:
                space_left[b] -= n
                assignment[i] = b
                break
        else:
            space_left.append(max_len - n)
            assignment[i] = len(space_left) - 1
    return assignment, len(space_left)


lengths = torch.randint(16, 400, (60,))
assignment, num_rows = pack_sequences(lengths, 512)
