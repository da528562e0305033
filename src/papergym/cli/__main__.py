"""``python -m papergym.cli``: the ``papergym`` command line."""

from papergym.cli import main

main()
