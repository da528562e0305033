"""``papergym write …``."""

from __future__ import annotations

from papergym.write.command import write_app as app

__all__ = ["app"]
