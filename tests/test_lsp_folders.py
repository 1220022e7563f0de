"""Multi-root workspaces: each folder's own `torchwise.*` settings (asked with workspace/configuration)."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from conftest import CONFIG, Editor, pytest_lsp

TEXT = "import torch\na = torch.Tensor(3)\nb = torch.Tensor([1])\n"


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("multi")
    (root / "app").mkdir()
    (root / "lib").mkdir()
    lsp_client.root = root
    lsp_client.set_configuration({"ignore": ["TW101"]}, section="torchwise", scope_uri=(root / "lib").as_uri())
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=(root / n).as_uri(), name=n) for n in ("app", "lib")],
        initialization_options={"settings": {}},
    ))
    yield
    await lsp_client.shutdown_session()


async def test_each_folder_gets_its_own_settings(client):
    app = await Editor(client, client.root / "app" / "m.py", TEXT).open().diagnostics()
    lib = await Editor(client, client.root / "lib" / "m.py", TEXT).open().diagnostics()
    assert [d.code for d in app] == ["TW101", "TW102"]
    assert [d.code for d in lib] == ["TW102"]
