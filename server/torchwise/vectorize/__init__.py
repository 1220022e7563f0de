"""The loop vectorizer: Python loops over tensors rewritten into proven-equal vectorized code.

``loops`` recognizes the loop shapes and the iteration space, ``expr`` translates a
per-element expression into a whole-tensor one (checking dtypes and shapes both ways),
``proof`` holds the soundness checks on names and statements, ``rewrite`` builds the
text edits. The rules TW401-TW407 (``rules/loops.py``) only ask :func:`loops.match_loop`
and :func:`loops.match_call` and turn the answer into findings.
"""
