# kind: must-stay-loop
# family: ragged-output
# origin: vit-pytorch ats_vit.py: the unique sampled token ids of each sample
# why: each row's result has its own length: the output is a list of tensors of different sizes
# tags: corpus-style module-level
import torch

sampled_token_ids = torch.randint(0, 20, (8, 30))
unique_sampled_token_ids_list = [torch.unique(t, sorted=True) for t in torch.unbind(sampled_token_ids)]
