"""Run a trained classifier on a folder of preprocessed inputs and write the top-k predictions."""

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, in_features: int = 512, num_classes: int = 100):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 256), nn.GELU(), nn.Dropout(0.2), nn.Linear(256, num_classes))

    def forward(self, x):
        return self.body(x)


def load_model(checkpoint: str, device: torch.device) -> nn.Module:
    model = Classifier()
    state = torch.load(checkpoint, map_location=device, weights_only=True)
    model.load_state_dict(state["model"] if "model" in state else state)
    model.to(device)
    model.eval()
    return model


def load_inputs(folder: str) -> tuple[list[str], torch.Tensor]:
    names, arrays = [], []
    for path in sorted(Path(folder).glob("*.npy")):
        names.append(path.stem)
        arrays.append(np.load(path).astype(np.float32))
    return names, torch.from_numpy(np.stack(arrays)) if arrays else torch.empty(0, 512)


@torch.inference_mode()
def predict(model: nn.Module, inputs: torch.Tensor, device: torch.device, k: int = 5, batch_size: int = 256):
    results = []
    for start in range(0, inputs.shape[0], batch_size):
        batch = inputs[start:start + batch_size].to(device, non_blocking=True)
        probs = F.softmax(model(batch), dim=-1)
        top = probs.topk(k, dim=-1)
        results.append((top.values.cpu().numpy(), top.indices.cpu().numpy()))
    if not results:
        return np.zeros((0, k)), np.zeros((0, k), dtype=np.int64)
    return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("inputs")
    parser.add_argument("--out", default="predictions.json")
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()

    use_cuda = torch.cuda.is_available() and not args.cpu
    device = torch.device("cuda" if use_cuda else "cpu")
    model = load_model(args.checkpoint, device)
    names, inputs = load_inputs(args.inputs)
    scores, classes = predict(model, inputs, device)
    out = {name: {"classes": c.tolist(), "scores": [round(float(s), 4) for s in sc]}
           for name, c, sc in zip(names, classes, scores)}
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(f"wrote {len(out)} predictions to {args.out}")


if __name__ == "__main__":
    main()
