# kind: must-stay-loop
# family: chunking
# origin: similarity search against a large gallery, chunked on purpose
# why: the chunks bound the peak memory of the (queries x gallery) product; a single matmul would be equal but defeats the purpose
# tags: module-level near-miss
import torch

queries = torch.randn(4096, 64)
gallery = torch.randn(512, 64)

best = []
for chunk in queries.split(1024):
    sims = chunk @ gallery.T  # at most 1024 x 512 at a time
    best.append(sims.argmax(dim=1))
best = torch.cat(best)
