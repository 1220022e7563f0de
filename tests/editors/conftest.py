"""The real-editor tests (Neovim from pytest here; VS Code runs from node, see README.md)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "editor: drives a real editor (Neovim, code-server); needs scripts/editors/install.sh")
