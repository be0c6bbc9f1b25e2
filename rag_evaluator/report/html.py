"""The report as one HTML page, rendered from the Jinja2 templates in ``templates/``: every
style, script, chart and datum inline.

Rules the page keeps (SPEC.md, "rag-eval report"):

- every text from the results, the inputs or the file names is escaped: the templates
  autoescape (HTML text and attributes), the table's cells go through ``escape_text``
  (the one place autoescaping is off, for speed) and the data for the script through
  ``script_json`` (JSON inside a ``<script>``), so an answer
  holding ``<script>``, ``</td>`` or ``javascript:`` is shown as text and runs nothing; no
  text of the results ever becomes a link or an attribute other than ``title``;
- the page makes no request: no URL in any ``src`` or ``href`` but ``#`` anchors, and a
  Content Security Policy of ``default-src 'none'`` that lets only the page's own script
  (by its hash) run;
- it reads without JavaScript: summary, cards, charts, diagnostics and the full table are
  plain HTML; the script adds tabs, sorting, filters, search and the contexts;
- it stays small: optional end tags (``</td>``, ``</tr>``) are left out, each chunk of
  context is stored once, gzip-compressed, and unpacked only when a row is opened.

Rendering is pure: the templates, the stylesheet and the script come in as text
(``PageFiles``; ``page_files.py`` reads them from the package).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import re
from dataclasses import dataclass

import jinja2
from markupsafe import Markup

from rag_evaluator.report import charts, page_parts
from rag_evaluator.report.contexts import ContextsData
from rag_evaluator.report.model import BINARY, CONTINUOUS, LABELS, LONG, ReportModel

PAGE_TEMPLATE = "page.html"


@dataclass(frozen=True)
class PageFiles:
    """What the page is made from besides the data: the templates (name, source) and the
    stylesheet and script inlined into every report."""

    templates: tuple[tuple[str, str], ...]
    stylesheet: str
    script: str


def escape_text(text: str) -> str:
    """Text for HTML content only (``& < >`` escaped): quotes need no escaping outside an
    attribute, and the table's cells are most of a report's bytes."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def script_json(data: object) -> str:
    """JSON that can sit inside ``<script>``: ``<``, ``>``, ``&`` and U+2028/2029 escaped,
    so no text in it can close the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(script: str) -> str:
    return (
        f"default-src 'none'; script-src {script_hash(script)}; style-src 'unsafe-inline'; "
        "base-uri 'none'; form-action 'none'"
    )


def contexts_payload(contexts: ContextsData) -> str:
    """The contexts as base64 of gzip-compressed JSON (deterministic: no timestamp)."""
    data = {
        "pool": list(contexts.pool),
        "retrieved": [
            {
                str(number): [[index, int(hit)] for index, hit in chunks]
                for number, chunks in run.items()
            }
            for run in contexts.retrieved
        ],
        "golden": [
            {
                str(number): [[index, int(hit)] for index, hit in chunks]
                for number, chunks in run.items()
            }
            for run in contexts.golden
        ],
    }
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


# A line break with the blanks around it, in a template's source.
_LINE_BREAK = re.compile(r"[ \t]*\n\s*")
_MARKUP_ENDS = (">", "}}")
_MARKUP_STARTS = ("<", "{{")
_STATEMENT_ENDS = ("%}", "#}")
_STATEMENT_STARTS = ("{%", "{#")


def without_layout(source: str) -> str:
    """A template's source with its layout taken out, so the templates can be indented for
    people while the page stays compact: a line break (with the blanks around it) is
    dropped between two pieces of markup (a tag or a ``{{ … }}`` on either side: ``>`` or
    ``}}`` before it, ``<`` or ``{{`` after it) and next to a ``{% … %}`` statement or a
    ``{# … #}`` comment; where it touches text it is one space, as HTML would show it.
    ``{{ "\\n" }}`` writes a line break into the page.
    """

    def replacement(match: re.Match[str]) -> str:
        start, end = match.span()
        if start == 0 or end == len(source):
            return ""
        if source.endswith(_STATEMENT_ENDS, 0, start) or source.startswith(_STATEMENT_STARTS, end):
            return ""
        between_markup = source.endswith(_MARKUP_ENDS, 0, start) and source.startswith(
            _MARKUP_STARTS, end
        )
        return "" if between_markup else " "

    return _LINE_BREAK.sub(replacement, source)


def _script_json(data: object) -> Markup:
    return Markup(script_json(data))


def _whole_percent(value: float) -> str:
    return f"{value:.0%}"


def _em(value: float) -> str:
    """A width in em, to a tenth."""
    return f"{value:.1f}"


_FILTERS = {
    # Only for the table's cells, where autoescaping is off (templates/run.html).
    "cell": escape_text,
    "script_json": _script_json,
    "n": charts.svg_number,
    "repr": repr,
    "pct0": _whole_percent,
    "em": _em,
}
_GLOBALS = {
    "zip": zip,
    "BINARY": BINARY,
    "CONTINUOUS": CONTINUOUS,
    "LABELS": LABELS,
    "LONG": LONG,
    "CHUNK_ROWS": page_parts.CHUNK_ROWS,
    "ROW_HEIGHT_PX": page_parts.ROW_HEIGHT_PX,
    "LINKS_SHOWN": page_parts.LINKS_SHOWN,
    "INTERVAL_WIDTH": charts.INTERVAL_WIDTH,
    "INTERVAL_HEIGHT": charts.INTERVAL_HEIGHT,
    "share": charts.share,
    "stacked_parts": charts.stacked_parts,
    "mean_bar_geometry": charts.mean_bar,
    "histogram_chart": charts.histogram_chart,
    "consensus_chart": charts.consensus_chart,
    "table_layout": page_parts.table_layout,
    "filter_groups": page_parts.filter_groups,
    "comparison_lines": page_parts.comparison_lines,
    "contexts_payload": contexts_payload,
}


@functools.lru_cache(maxsize=4)
def _environment(templates: tuple[tuple[str, str], ...]) -> jinja2.Environment:
    """The templates compiled once per process: autoescaping on for all of them (every
    template is HTML), and a name the template does not know is an error, not a blank."""
    environment = jinja2.Environment(
        loader=jinja2.DictLoader({name: without_layout(text) for name, text in templates}),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
    )
    environment.filters.update(_FILTERS)
    environment.globals.update(_GLOBALS)
    return environment


def render_report(model: ReportModel, files: PageFiles) -> str:
    """The whole report page."""
    template = _environment(files.templates).get_template(PAGE_TEMPLATE)
    return template.render(
        model=model,
        policy=content_security_policy(files.script),
        # The package's own files, inlined as they are: they hold no text of the results.
        stylesheet=Markup(files.stylesheet),
        script=Markup(files.script),
        table_styles=Markup("".join(page_parts.table_style(run) for run in model.runs)),
        script_data=page_parts.script_data(model),
    )
