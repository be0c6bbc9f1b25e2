"""The report page's package files, read with ``importlib.resources`` (so they are found in
a wheel, a zip or a source tree alike): the Jinja2 templates in ``templates/`` and the
stylesheet and script in ``assets/``, inlined into every report.

The script only adds to a page that is complete without it: tabs, sorting, filters,
search, expanding rows, colouring metric cells, and the contexts (kept compressed in the
page, unpacked on first use). It builds every element from data with ``textContent``; no
text of the results ever reaches ``innerHTML``. It makes no request: the page's Content
Security Policy (``default-src 'none'``) would refuse one anyway.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable

from rag_evaluator.errors import ConfigError
from rag_evaluator.report.html import PageFiles

_PACKAGE = "rag_evaluator.report"
TEMPLATES_FOLDER = "templates"
ASSETS_FOLDER = "assets"
STYLESHEET = "report.css"
SCRIPT = "report.js"


def _templates(folder: Traversable) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (file.name, file.read_text(encoding="utf-8"))
            for file in folder.iterdir()
            if file.name.endswith(".html")
        )
    )


@functools.cache
def read_page_files() -> PageFiles:
    """Every template, the stylesheet and the script, read once per process."""
    root = resources.files(_PACKAGE)
    assets = root.joinpath(ASSETS_FOLDER)
    try:
        return PageFiles(
            templates=_templates(root.joinpath(TEMPLATES_FOLDER)),
            stylesheet=assets.joinpath(STYLESHEET).read_text(encoding="utf-8"),
            script=assets.joinpath(SCRIPT).read_text(encoding="utf-8"),
        )
    except OSError as exc:
        where = exc.filename or f"{_PACKAGE}: {TEMPLATES_FOLDER}/, {ASSETS_FOLDER}/"
        raise ConfigError(
            f"Cannot read the report's page file {where}: "
            f"{exc.strerror or type(exc).__name__}. Reinstall rag-eval "
            "(pip install --force-reinstall rag-eval)"
        ) from exc
