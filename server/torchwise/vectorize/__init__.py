"""The loop vectorizer: Python loops over tensors rewritten into proven-equal vectorized code.

The rules TW401-TW407 (``rules/loops.py``) only ask :func:`loops.match_loop` and
:func:`loops.match_call` and turn the answer into findings. Behind them:

- ``space``: the iteration space (ranges, tensors, lists, ``enumerate``/``zip``, nests).
- ``general``: the general path: a loop (nest) whose body is translated statement by statement.
- ``body``: the statement translator; classifies each write (store, append, accumulation,
  scatter, scan) and keeps temporaries, ``if``/``elif`` and ``continue`` as batched values.
- ``batch`` with its mixins ``indexing`` (slices, shifts, columns, diagonals, gathers,
  ragged reads, a sample made a batch of one through a sample-wise op: ``F.interpolate(img[None])[0]``)
  and ``calling`` (ops batched by the op table's rule, contractions, vmap, layers that treat each
  sample on its own: ``model(x[i])`` -> ``model(x)``):
  one per-element expression to one whole-tensor :class:`vec.Vec`, with its dtype/shape proof.
- ``oracle``: asks the facts engine what an op gives, on one element and on the whole tensor.
- ``emit``: writes to rewrite lines and the finding's message.
- ``calls``: comprehensions and calls (``torch.stack([...])``, ``map``, ``torch.tensor([...])``).
- ``loops``: the entry points and the few loop shapes kept apart (``torch.cat`` accumulation,
  running extremes, diagnostics without a fix).
- ``collect``: per-item loops and comprehensions over items nothing is known of (a list filled in
  another method, a parameter no call shows) whose results one ``torch.cat``/``stack`` joins: no
  rewrite can be proven, so they are flagged with that reason, never fixed.
- ``expr``, ``proof``, ``rewrite``: precedence, soundness checks on names, text edits.
"""
