"""``papergym train …``."""

from __future__ import annotations

from papergym.train.command import train_app as app

__all__ = ["app"]
