"""Inlay hints over real LSP: shapes in named dims and non-default dtypes after assignments, nothing unknown."""

from __future__ import annotations

from lsprotocol import types

from conftest import CONFIG, Editor, open_notebook, pytest_lsp, start_session, wait_until
from pytest_lsp import LanguageClient

MODEL = """import torch

def block(x, n_embd: int):
    B, T, C = x.shape
    h = torch.zeros(B, T, n_embd)
    idx = torch.arange(T)
    half = h.half()
    mystery = unknown(h)
    return h

a = torch.randn(3, 4)
b, c = a @ a.T, torch.tensor([1, 2])
z: torch.Tensor = torch.ones(2)
"""


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("inlay_ws")
    lsp_client.root = root
    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


async def inlay(client, uri: str, first: int = 0, last: int = 100) -> list[tuple[int, int, str]]:
    found = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=first, character=0), end=types.Position(line=last, character=0))))
    return [(h.position.line, h.position.character, h.label) for h in found or []]


def configure(client, **hints) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"torchwise": {"inlayHints": hints}}))


async def test_a_plain_file_gets_hints(client):
    doc = Editor(client, client.root / "declare.py", "import torch\nx = torch.ones(3)\n").open()
    await doc.diagnostics()
    assert await inlay(client, doc.uri) == [(1, 1, ": (3,)")]


async def test_shapes_in_named_dims_and_dtypes_off_the_default(client):
    doc = Editor(client, client.root / "model.py", MODEL).open()
    await doc.diagnostics()
    assert await inlay(client, doc.uri) == [
        (4, 5, ": (B, T, n_embd)"),
        (5, 7, ": (T,) int64"),
        (6, 8, ": (B, T, n_embd) float16"),
        (10, 1, ": (3, 4)"),
        (11, 1, ": (3, 3)"),
        (11, 4, ": (2,) int64"),
    ]  # nothing on `B, T, C` (ints), `mystery` (unknown) or the annotated `z`


async def test_only_the_requested_range(client):
    doc = Editor(client, client.root / "ranged.py", MODEL).open()
    await doc.diagnostics()
    assert await inlay(client, doc.uri, 5, 6) == [(5, 7, ": (T,) int64"), (6, 8, ": (B, T, n_embd) float16")]


async def test_settings_turn_shapes_and_dtypes_off(client):
    doc = Editor(client, client.root / "settings.py", MODEL).open()
    await doc.diagnostics()
    try:
        configure(client, shapes=False)
        found = await wait_until_hints(client, doc.uri, lambda hints: all("(" not in h[2] for h in hints))
        assert found == [(5, 7, ": int64"), (6, 8, ": float16"), (11, 4, ": int64")]
        configure(client, shapes=False, dtypes=False)
        assert await wait_until_hints(client, doc.uri, lambda hints: not hints) == []
    finally:
        configure(client)
    assert len(await wait_until_hints(client, doc.uri, lambda hints: len(hints) == 6)) == 6


async def wait_until_hints(client, uri, condition, timeout: float = 10.0):
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = await inlay(client, uri)
        if condition(found) or loop.time() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_nothing_while_unknown(client):
    doc = Editor(client, client.root / "unknown.py", "def f(x):\n    y = x + 1\n    return y\n").open()
    await doc.diagnostics()
    assert await inlay(client, doc.uri) == []


async def test_notebook_cells_get_their_own_hints(client):
    path = client.root / "hints.ipynb"
    first, second = open_notebook(client, path, ["import torch\nx = torch.arange(5)\n", "y = x.float() * 2\n"])
    await wait_until(lambda: second in client.diagnostics, what="the notebook's diagnostics")
    assert await inlay(client, first) == [(1, 1, ": (5,) int64")]
    assert await inlay(client, second) == [(0, 1, ": (5,)")]


def test_settings_parse_inlay_hints():
    from torchwise.lsp.settings import parse_settings

    settings, problems = parse_settings({"torchwise": {"inlayHints": {"shapes": False}}})
    assert (settings.inlay_shapes, settings.inlay_dtypes, problems) == (False, True, [])
    settings, problems = parse_settings({"torchwise": {"inlayHints": {"dtypes": "no"}}})
    assert settings.inlay_dtypes is True and problems == ["torchwise.inlayHints.dtypes: expected true or false; using true"]
