"""Where the corpus is, and how one of its files is imported unchanged (and forgotten afterwards)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Iterator, Mapping

REPO = Path(__file__).resolve().parents[2]


def corpus_root() -> Path | None:
    """``$TORCHWISE_CORPUS``, else ``<repo>/../shared/corpus``; None when that folder is not there."""
    configured = os.environ.get("TORCHWISE_CORPUS")
    root = Path(configured) if configured else REPO.parent / "shared" / "corpus"
    return root if root.is_dir() else None


class _Stub(types.ModuleType):
    """A stand-in for a module the file imports but its models never use: any attribute is another stub."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")


@contextlib.contextmanager
def imported(path: Path, packages: Mapping[str, Path] = {}, stubs: tuple = ()) -> Iterator[types.ModuleType]:
    """The module at ``path``, executed from that very file (its code objects carry its path).

    ``packages``: package name -> its folder, installed bare (its ``__init__`` is not run: vit-pytorch's
    imports torchvision) so that the file's absolute imports of its siblings work (``from vit_pytorch.vit
    import Transformer``, ``from mingpt.utils import CfgNode``); a file inside one is imported as a
    member of it. ``stubs``: modules given as empty stand-ins when they are not installed (``torchvision``,
    which the pytorch/examples scripts import for their data loaders only). On the way out every module
    this made, and every module loaded from those folders, is removed again: the next import runs the
    files afresh and nothing leaks into other tests.
    """
    path = path.resolve()
    folders = {path.parent, *(Path(f).resolve() for f in packages.values())}
    # An installed package of the same name (pip's vit-pytorch) steps aside meanwhile.
    installed = {name: sys.modules.pop(name) for name in list(sys.modules)
                 if any(name == p or name.startswith(p + ".") for p in packages)}
    before = set(sys.modules)
    made = []
    try:
        for name, folder in packages.items():
            package = types.ModuleType(name)
            package.__path__ = [str(Path(folder).resolve())]
            sys.modules[name] = package
            made.append(name)
        for name in stubs:
            if name not in sys.modules and importlib.util.find_spec(name) is None:
                sys.modules[name] = _Stub(name)
                made.append(name)
        member = next((name for name, folder in packages.items() if Path(folder).resolve() == path.parent), None)
        if member is not None:
            module = importlib.import_module(f"{member}.{path.stem}")
        else:
            name = f"_realmodel_{path.parent.name}_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            made.append(name)
            spec.loader.exec_module(module)
        yield module
    finally:
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None)
            if name in made or file is not None and Path(file).resolve().parent in folders:
                del sys.modules[name]
        sys.modules.update(installed)
