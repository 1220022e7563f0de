"""torchwise: PyTorch pitfalls diagnosed, explained and fixed as you type."""

__version__ = "0.1.0"
