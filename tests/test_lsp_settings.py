"""Editor settings reach the server at start and on change; bad values get a clear message."""

from __future__ import annotations

from lsprotocol import types

from conftest import CONFIG, Editor, pytest_lsp, start_session, wait_until
from pytest_lsp import LanguageClient


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("settings_ws")
    lsp_client.root = root
    await start_session(lsp_client, root, {"ignore": ["TW102"], "severity": {"TW101": "bogus"},
                                           "benchmark": {"device": "tpu"}})
    yield
    await lsp_client.shutdown_session()


TEXT = "import torch\na = torch.Tensor(3)\nb = torch.Tensor([1])\n"


async def test_initialization_options_and_configuration_changes(client):
    # A bad value is named in a message; the rest of the settings still apply.
    await wait_until(lambda: any("bogus" in m.message for m in client.messages), what="a message about 'bogus'")
    assert any("tpu" in m.message for m in client.messages)
    doc = Editor(client, client.root / "s.py", TEXT).open()
    diags = await doc.diagnostics()
    assert [d.code for d in diags] == ["TW101"]

    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"torchwise": {"select": ["TW1"], "ignore": [], "severity": {"TW101": "error", "TW102": "off"}}}))
    await wait_until(lambda: [(d.code, d.severity) for d in client.diagnostics[doc.uri]]
                     == [("TW101", types.DiagnosticSeverity.Error)], what="TW101 as an error, TW102 off")


async def test_server_logs_through_window_log_message(client):
    await wait_until(lambda: any("ready" in m.message for m in client.log_messages), what="the ready log line")
