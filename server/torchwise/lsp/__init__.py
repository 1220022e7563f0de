"""The language server: translates LSP to engine calls and back, nothing more."""
