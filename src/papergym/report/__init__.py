"""``papergym report``: one self-contained HTML page (and the same tables in Markdown) from
``papergym eval`` and ``papergym compare`` folders, train runs, ``papergym review`` and ``review
eval`` outputs, and builds (:mod:`~papergym.report.kinds` tells which).

The page opens with no network: plots are inline SVG from :mod:`papergym.report.plots`, the style
is inline, and the only script is the sample browser's (:mod:`papergym.report.browser`),
inline and allowed by its sha256. Answers, reasons and names are untrusted text: the template
escapes everything (Jinja2 autoescape), the browser's data is JSON it writes as text only, and
a Content-Security-Policy forbids every other script and every external load, so a
``<script>`` inside an answer is shown as text and could not run even if an escape were missed.

Every input folder is read and checked before anything is written, so bad input leaves no file.
"""
