# kind: must-stay-loop
# family: python-data
# origin: turning token ids back into words, stopping at <eos>
# why: a Python dict lookup per id and a break at the end token: the result is a list of strings
# tags: module-level
import torch

itos = {i: f"w{i}" for i in range(100)}
itos[1] = "<eos>"
ids = torch.tensor([5, 17, 42, 8, 1, 33, 2])

words = []
for t in ids:
    word = itos[int(t)]
    if word == "<eos>":
        break
    words.append(word)
sentence = " ".join(words)
