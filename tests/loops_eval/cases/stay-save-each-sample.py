# kind: must-stay-loop
# family: io
# origin: written for stop 25 as users write it (probe set): writing each preprocessed sample to its own buffer
# why: one torch.save per sample, in order: I/O
# tags: module-level
import io
import torch

batch = torch.randn(8, 3, 16, 16)
buffers = []
for i, sample in enumerate(batch):
    buf = io.BytesIO()
    torch.save({"index": i, "image": sample.clone()}, buf)
    buffers.append(buf.getvalue())
