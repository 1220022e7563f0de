# kind: vectorizable
# family: comprehension
# origin: timm distributed_sampler.py RepeatAugSampler: an index tensor from a comprehension over range
# results: indices
# tags: corpus-style module-level
import torch

num_repeats = 3
dataset_len = 1000
indices = torch.randperm(dataset_len)
repeat_size = dataset_len * num_repeats
indices = indices[torch.tensor([int(i // num_repeats) for i in range(repeat_size)])]
# ---- vectorized ----
import torch

num_repeats = 3
dataset_len = 1000
indices = torch.randperm(dataset_len)
repeat_size = dataset_len * num_repeats
indices = indices[torch.arange(repeat_size) // num_repeats]
