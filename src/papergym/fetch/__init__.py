"""Downloading arXiv e-print sources politely: ``papergym fetch``.

One request at a time, a delay between requests, a User-Agent that names PaperGym and a
contact, and retries with back-off when arXiv answers 503 or 429. Each paper lands in
``PAPERS/<id>/`` (its source unpacked, ``metadata.json`` beside it) only once complete, so an
interrupted run leaves nothing that looks finished, and the next run skips what is done.
"""
