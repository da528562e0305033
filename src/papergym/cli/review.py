"""``papergym review …``."""

from __future__ import annotations

from papergym.review.command import review_app as app

__all__ = ["app"]
