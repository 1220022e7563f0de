"""Real models from the corpus, run for real and compared with what the engine says about their code.

- ``loading``: find the corpus; import one of its files by path, unchanged, and undo the import after;
- ``facts``: what an engine value claims that the runtime can check;
- ``sites``: the names in the file the engine states a checkable fact about, and the loops around them;
- ``recorder``: ``sys.settrace`` over that file's code: the runtime value at each of those names, per call;
- ``checking``: the engine's facts against those values (ranks, dims, symbols, dtypes, devices);
- ``catalogue``: the models, their tiny configs and the inputs they run on;
- ``checked``: a small program of a test analysed, run under the recorder and checked in one call.
"""
