"""Post-training dynamic quantization of a small LSTM classifier and export to TorchScript and ONNX."""

import os
import time

import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab: int = 5000, embed: int = 128, hidden: int = 256, classes: int = 4):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        _, (h, _) = self.lstm(self.embedding(tokens))
        return self.fc(h[-1])


def model_size_mb(model: nn.Module, path: str = "tmp_size.pt") -> float:
    torch.save(model.state_dict(), path)
    size = os.path.getsize(path) / 1e6
    os.remove(path)
    return size


def latency_ms(model: nn.Module, tokens: torch.Tensor, repeats: int = 20) -> float:
    # Quantized kernels run on the CPU, synchronously: wall-clock time is the real cost here.
    with torch.inference_mode():
        model(tokens)
        start = time.perf_counter()
        for _ in range(repeats):
            model(tokens)
        return (time.perf_counter() - start) / repeats * 1e3


def main() -> None:
    torch.manual_seed(0)
    model = TextClassifier().eval()
    tokens = torch.randint(0, 5000, (8, 64))

    quantized = torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    print(f"size: {model_size_mb(model):.2f} MB -> {model_size_mb(quantized):.2f} MB")
    print(f"latency: {latency_ms(model, tokens):.2f} ms -> {latency_ms(quantized, tokens):.2f} ms")

    with torch.no_grad():
        reference = model(tokens)
        approx = quantized(tokens)
    print("max abs diff:", (reference - approx).abs().max().item())

    scripted = torch.jit.script(quantized)
    scripted.save("text_classifier_q.pt")

    torch.onnx.export(
        model,
        (tokens,),
        "text_classifier.onnx",
        input_names=["tokens"],
        output_names=["logits"],
        dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch"}},
        opset_version=17,
    )


if __name__ == "__main__":
    main()
