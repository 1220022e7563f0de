# kind: must-stay-loop
# family: io
# origin: minGPT projects/adder: collect per-sample correctness and print the first mistakes
# why: prints up to five mistakes, a data-dependent side effect interleaved with the collection
# tags: corpus-style module-level
import torch

d3i_pred = torch.randint(0, 200, (64,))
d3i_gt = torch.where(torch.rand(64) < 0.9, d3i_pred, d3i_pred + 1)
correct = (d3i_pred == d3i_gt).cpu()

results = []
mistakes_printed_already = 0
for i in range(d3i_pred.size(0)):
    results.append(int(correct[i]))
    if not correct[i] and mistakes_printed_already < 5:  # only print up to 5 mistakes
        mistakes_printed_already += 1
        print("GPT claims %d but gt is %d" % (d3i_pred[i], d3i_gt[i]))
rt = torch.tensor(results, dtype=torch.float)
