"""Editor settings (VS Code ``torchwise.*``), validated once into a typed value.

The client sends ``initializationOptions = {"settings": {...}}`` and, on change,
``workspace/didChangeConfiguration`` with ``{"torchwise": {...}}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from torchwise.config import RuleConfig, parse_rule_config

DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class EditorSettings:
    rules: RuleConfig = field(default_factory=RuleConfig)
    benchmark_device: str = "auto"
    benchmark_time_limit: float = 30.0
    benchmark_sizes: tuple = ()  # ((name, size), ...) for loops whose sizes the analysis cannot know
    interpreter: str = ""  # the user's Python (its torch, its GPU): where benchmarks run
    # The editor vouches for the workspace (VS Code: workspace trust). Until then the benchmark, which runs
    # the workspace's code, is neither offered nor run. Read only from the client, never from pyproject.toml.
    trusted: bool = False
    # Inlay hints after assignments (`: (B, T, n_embd)`, `: (N,) int64`): the shape, and a dtype that is not the default.
    inlay_shapes: bool = True
    inlay_dtypes: bool = True


def parse_settings(data: Any) -> tuple[EditorSettings, list[str]]:
    """Settings from the client, and a message per value that was ignored because it was wrong."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        return EditorSettings(), ([] if data is None else ["torchwise settings: expected an object"])
    if isinstance(data.get("torchwise"), Mapping):  # didChangeConfiguration shape
        data = data["torchwise"]
    elif isinstance(data.get("settings"), Mapping):  # initializationOptions shape
        data = data["settings"]
    rules = parse_rule_config(data, "torchwise settings", problems)
    bench = data.get("benchmark") if isinstance(data.get("benchmark"), Mapping) else {}
    device = bench.get("device", "auto")
    if device not in DEVICES:
        problems.append(f"torchwise.benchmark.device: {device!r} is not one of {', '.join(DEVICES)}; using auto")
        device = "auto"
    limit = bench.get("timeLimit", 30)
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or not 0 < limit < math.inf:  # 1e400 is inf
        problems.append(f"torchwise.benchmark.timeLimit: {limit!r} is not a positive number; using 30")
        limit = 30
    sizes = bench.get("sizes") or {}
    if not isinstance(sizes, Mapping) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in sizes.values()):
        problems.append("torchwise.benchmark.sizes: expected an object of names to sizes, such as {\"N\": 1000}")
        sizes = {}
    interpreter = data.get("interpreter") or ""
    if not isinstance(interpreter, str):
        problems.append("torchwise.interpreter: expected a path")
        interpreter = ""
    trusted = data.get("trusted", False)
    if not isinstance(trusted, bool):
        problems.append("torchwise.trusted: expected true or false; using false")
        trusted = False
    hints = data.get("inlayHints") if isinstance(data.get("inlayHints"), Mapping) else {}
    shown = {}
    for key in ("shapes", "dtypes"):
        shown[key] = hints.get(key, True)
        if not isinstance(shown[key], bool):
            problems.append(f"torchwise.inlayHints.{key}: expected true or false; using true")
            shown[key] = True
    return EditorSettings(rules, device, float(limit), tuple(sorted(sizes.items())), interpreter, trusted,
                          inlay_shapes=shown["shapes"], inlay_dtypes=shown["dtypes"]), problems
