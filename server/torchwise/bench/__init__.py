"""Benchmark a loop against its vectorized rewrite, in the user's own Python (see ``api.py``).

Nothing here imports torch: ``worker_main.py`` does, in a separate process started with the
user's interpreter.
"""
