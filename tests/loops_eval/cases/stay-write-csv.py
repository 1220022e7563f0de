# kind: must-stay-loop
# family: io
# origin: dumping predictions to a CSV file, one row per sample
# why: the loop writes to a file
# tags: function-param
import io

import torch


def write_predictions(f, probs):
    for i, row in enumerate(probs):
        f.write(f"{i}," + ",".join(f"{p:.4f}" for p in row.tolist()) + "\n")


buf = io.StringIO()
write_predictions(buf, torch.softmax(torch.randn(10, 3), dim=1))
csv_text = buf.getvalue()
