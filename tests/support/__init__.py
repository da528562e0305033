"""Helpers the tests share, importable as ``support`` (``tests/`` is on pytest's ``pythonpath``).

Shared helpers live here, not in a ``conftest.py``: pytest imports every ``conftest.py`` under
the module name ``conftest``, so ``from conftest import X`` finds whichever one was loaded last
(``tests/train/conftest.py`` under ``pytest -m slow``). Conftest files hold fixtures only.
"""
