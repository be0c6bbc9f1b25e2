"""The report as one HTML page: every style, script, chart and datum inline.

Rules the page keeps (SPEC.md, "rag-eval report"):

- every text from the results, the inputs or the file names goes through ``escape``
  (HTML text and attributes) or ``script_json`` (JSON inside a ``<script>``), so an
  answer holding ``<script>``, ``</td>`` or ``javascript:`` is shown as text and runs
  nothing; no text of the results ever becomes a link or an attribute other than
  ``title``;
- the page makes no request: no URL in any ``src`` or ``href`` but ``#`` anchors, and a
  Content Security Policy of ``default-src 'none'`` that lets only the page's own script
  (by its hash) run;
- it reads without JavaScript: summary, cards, charts, diagnostics and the full table are
  plain HTML; the script adds tabs, sorting, filters, search and the contexts;
- it stays small: optional end tags (``</td>``, ``</tr>``) are left out, each chunk of
  context is stored once, gzip-compressed, and unpacked only when a row is opened.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Iterable, Sequence
from html import escape as _escape

from rag_evaluator.compare.comparison import LOWER_IS_BETTER
from rag_evaluator.report.assets import SCRIPT, STYLE
from rag_evaluator.report.charts import (
    consensus_svg,
    histogram_svg,
    interval_svg,
    mean_bar,
    stacked_bar,
)
from rag_evaluator.report.comparison import ComparisonView, DropGroup, FlipGroup, RunComparisonView
from rag_evaluator.report.contexts import ContextsData
from rag_evaluator.report.diagnostics import DiagnosticResult
from rag_evaluator.report.distributions import ConsensusSummary
from rag_evaluator.report.model import (
    BINARY,
    CONTEXTS,
    CONTINUOUS,
    FLAGS,
    LABELS,
    LONG,
    NUMBER,
    TEXT,
    MetricCard,
    ReportModel,
    RunView,
)
from rag_evaluator.results.run_scores import MetricKind

# Question links listed per diagnostic; the table's filter shows every flagged question.
LINKS_SHOWN = 200
# Rows per chunk of the table, and the height a chunk reserves before it is first laid out.
CHUNK_ROWS = 200
ROW_HEIGHT_PX = 58

_WIDTHS_EM = {NUMBER: 3.6, BINARY: 2.4, CONTINUOUS: 4.6, LABELS: 6.5, FLAGS: 7.5, CONTEXTS: 3.6}
_LONG_WIDTHS_EM = {"Question": 16.0, "Ground Truth": 18.0, "Answer": 22.0, "Reasoning": 20.0}
_NUMERIC_ROLES = (NUMBER, BINARY, CONTINUOUS, CONTEXTS)


def escape(text: object) -> str:
    """Text for HTML content or a double-quoted attribute (``& < > " '`` escaped)."""
    return _escape(str(text), quote=True)


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


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


# -- header and facts -------------------------------------------------------------------------


def _facts(run: RunView) -> str:
    items = "".join(
        f"<div><dt>{escape(label)}</dt><dd>{escape(value)}</dd></div>" for label, value in run.facts
    )
    return f'<dl class="facts">{items}</dl>'


# -- cards ------------------------------------------------------------------------------------


def _legend(card: MetricCard) -> str:
    spans = "".join(
        f'<span class="{escape(segment.tone)}">{escape(segment.label)} '
        f"<b>{segment.count}</b></span>"
        for segment in card.segments
        if segment.count
    )
    return f'<div class="legend">{spans}</div>'


def _card(card: MetricCard) -> str:
    parts = [f'<div class="card"><h4>{escape(card.column)}</h4>']
    parts.append(f'<div class="big">{escape(card.headline)}</div>')
    if card.kind != LABELS:
        parts.append(f'<div class="ci">{escape(card.interval or "95% CI n/a")}</div>')
    if card.kind == CONTINUOUS:
        parts.append(mean_bar(card.value, card.bounds))
    else:
        parts.append(stacked_bar(card.segments, f"{card.column}: {card.detail}"))
        parts.append(_legend(card))
    detail = card.detail + (" · lower is better" if card.lower_is_better else "")
    parts.append(f'<div class="d">{escape(detail)}</div></div>')
    return "".join(parts)


# -- distributions ----------------------------------------------------------------------------


def _consensus(summary: ConsensusSummary) -> str:
    parts = ['<div class="chart"><h4>Judge consensus</h4>']
    share = f"{summary.hedged / summary.judged:.0%}" if summary.judged else "0%"
    parts.append(
        f'<p class="note">{summary.hedged} of {summary.judged} judged question(s) hedged '
        f"({share}) and got three more votes; the majority is the score.</p>"
    )
    if summary.hedged and summary.splits:
        parts.append(consensus_svg(summary))
        parts.append(
            '<div class="legend"><span class="pass">unanimous 3–0</span>'
            '<span class="l2">split 2–1</span><span class="none">overturned: majority ≠ '
            "first verdict</span></div>"
        )
    if summary.vote_errors:
        parts.append(f'<p class="note">{summary.vote_errors} vote(s) failed.</p>')
    parts.append("</div>")
    return "".join(parts)


def _distributions(run: RunView) -> str:
    charts = []
    for chart in run.histograms:
        note = " (lower is better)" if chart.lower_is_better else ""
        charts.append(
            f'<div class="chart"><h4>{escape(chart.column)}{note}</h4>'
            f"{histogram_svg(chart, run.index)}"
            f'<p class="note">n = {chart.count}, mean {chart.mean:.4f}</p></div>'
        )
    if run.consensus is not None:
        charts.append(_consensus(run.consensus))
    if not charts:
        return ""
    hint = (
        '<p class="note jsonly" hidden>Click a bar to show its questions in the table; the '
        "dashed line is the mean.</p>"
        if run.histograms
        else ""
    )
    return f'<h3>Distributions</h3>{hint}<div class="charts">{"".join(charts)}</div>'


# -- diagnostics ------------------------------------------------------------------------------


def _question_links(run_index: int, numbers: Sequence[int]) -> str:
    links = "".join(
        f'<a href="#r{run_index}q{number}">{number}</a>' for number in numbers[:LINKS_SHOWN]
    )
    more = len(numbers) - LINKS_SHOWN
    tail = f" … and {more} more (filter the table to see them all)" if more > 0 else ""
    return f'<p class="qs">{links}{escape(tail)}</p>'


def _diagnostic(run: RunView, result: DiagnosticResult) -> str:
    flagged = len(result.flagged)
    classes = "diag hit" if flagged else "diag"
    rule = result.rule
    body = [
        f'<p>{escape(rule.meaning)} <span class="mute">({escape(rule.source)}; '
        f"{result.checked} question(s) had the values)</span></p>"
    ]
    if flagged:
        body.append(_question_links(run.index, result.flagged))
        body.append(
            f'<button type="button" class="dq jsonly" hidden data-f="d:{escape(rule.key)}">'
            "Show these in the table</button>"
        )
    return (
        f'<details class="{classes}"><summary><span class="count">{flagged}</span>'
        f'<b>{escape(rule.title)}</b><span class="mute">{escape(result.criterion())}</span>'
        f'</summary><div class="body">{"".join(body)}</div></details>'
    )


def _diagnostics(run: RunView) -> str:
    applied = [result for result in run.diagnostics if result.applied]
    skipped = [result for result in run.diagnostics if not result.applied]
    parts = ["<h3>Diagnostics</h3>"]
    parts += [_diagnostic(run, result) for result in applied]
    if skipped:
        listed = "; ".join(
            f"{result.rule.title} (needs {' and '.join(result.missing)})" for result in skipped
        )
        parts.append(
            f'<p class="note">Not checked, the run lacks the columns: {escape(listed)}.</p>'
        )
    return "".join(parts)


# -- the per-question table -------------------------------------------------------------------


def _column_width(name: str, role: str, cells: Iterable[str]) -> float:
    if role == LONG:
        return _LONG_WIDTHS_EM.get(name, 16.0)
    if role == TEXT:
        longest = max((len(cell) for cell in cells), default=0)
        return min(max(longest * 0.55 + 1.2, len(name) * 0.6 + 1.2, 3.6), 14.0)
    return _WIDTHS_EM.get(role, 6.0)


def _table_style(run: RunView) -> str:
    numeric = [
        f"#w{run.index} td:nth-child({position + 1})"
        for position, column in enumerate(run.columns)
        if column.role in _NUMERIC_ROLES and position > 0
    ]
    if not numeric:
        return ""
    return (
        ",".join(numeric)
        + "{text-align:right;font-variant-numeric:tabular-nums;padding-left:3px;padding-right:4px}"
    )


def _table(run: RunView) -> str:
    """The header in a sticky table of its own, then the rows in tables of ``CHUNK_ROWS``.

    Each chunk is a ``content-visibility: auto`` block with the same fixed column widths,
    so the browser lays out only the chunks on screen: one table of 5,000 rows costs
    seconds of layout on every pass while the page loads; chunks cost nothing until seen.
    """
    widths = [
        _column_width(column.name, column.role, (row.cells[position] for row in run.rows))
        for position, column in enumerate(run.columns)
    ]
    width = f"width:{sum(widths):.1f}em"
    colgroup = (
        "<colgroup>" + "".join(f'<col style="width:{w:.1f}em">' for w in widths) + "</colgroup>"
    )
    headers = []
    for column in run.columns:
        name = escape(column.name)
        if column.role in (BINARY, CONTINUOUS):
            headers.append(f'<th scope="col" class="v" title="{name}"><span>{name}</span></th>')
        else:
            headers.append(f'<th scope="col">{name}</th>')
    roles = [column.role for column in run.columns]
    lines = []
    for row in run.rows:
        attributes = f' id="r{run.index}q{row.question_number}"'
        classes = " ".join(
            name for name, present in (("u", row.unscored), ("c", row.consensus)) if present
        )
        if classes:
            attributes += f' class="{classes}"'
        if row.changes:
            attributes += f' data-f="{" ".join(row.changes)}"'
        cells = "".join(
            ("<td><p>" if role == LONG and text else "<td>") + escape_text(text)
            for role, text in zip(roles, row.cells, strict=True)
        )
        lines.append(f"<tr{attributes}>{cells}")
    chunks = []
    for start in range(0, len(lines), CHUNK_ROWS):
        part = lines[start : start + CHUNK_ROWS]
        chunks.append(
            f'<div class="ck" style="{width};contain-intrinsic-size:auto '
            f'{len(part) * ROW_HEIGHT_PX}px"><table class="q" style="{width}">{colgroup}'
            "<tbody>\n" + "\n".join(part) + "\n</tbody></table></div>"
        )
    return (
        f'<div class="tw" id="w{run.index}"><table class="q qh" id="t{run.index}" '
        f'style="{width}">{colgroup}<thead><tr>{"".join(headers)}</tr></thead></table>'
        + "".join(chunks)
        + "</div>"
    )


def _toolbar(run: RunView) -> str:
    groups: dict[str, list[str]] = {}
    for option in run.filters:
        label = f"{option.label} ({option.count})"
        groups.setdefault(option.group, []).append(
            f'<option value="{escape(option.value)}">{escape(label)}</option>'
        )
    select = "".join(
        f'<optgroup label="{escape(group)}">{"".join(options)}</optgroup>'
        for group, options in groups.items()
    )
    total = len(run.rows)
    return (
        '<div class="bar" hidden>'
        '<input type="search" placeholder="Search questions, answers, reasoning (press /)" '
        'aria-label="Search the table">'
        f'<select aria-label="Filter the table">{select}</select>'
        '<span class="chip" hidden><span></span><button type="button" '
        'aria-label="Clear the range filter">×</button></span>'
        '<label><input type="checkbox"> Expand all</label>'
        f'<span class="shown mute">Showing {total} of {total} questions</span></div>'
    )


def _questions(run: RunView) -> str:
    notes = ["Click a row to unfold its long texts"]
    if run.has_contexts:
        notes[0] += " and show its contexts"
    notes.append("red edge: unscored, orange edge: judge consensus")
    if run.empty_columns:
        notes.append("columns with no value: " + ", ".join(run.empty_columns))
    return (
        "<h3>Questions</h3>"
        + _toolbar(run)
        + f'<p class="note">{escape("; ".join(notes))}.</p>'
        + _table(run)
    )


def _run_section(run: RunView, runs: int) -> str:
    badge = " (baseline)" if run.baseline and runs > 1 else ""
    heading_badge = "<small>baseline</small>" if run.baseline and runs > 1 else ""
    cards = "".join(_card(card) for card in run.cards if not card.metadata)
    metadata = "".join(_card(card) for card in run.cards if card.metadata)
    parts = [
        f'<section class="tab run" id="run{run.index}" data-run="{run.index}" '
        f'data-tab="{escape(run.label + badge)}">',
        f"<h2>{escape(run.label)}{heading_badge}</h2>" if runs > 1 else "",
        f'<p class="note">{escape(run.source)}</p>',
        _facts(run),
    ]
    if cards:
        parts.append(f'<h3>Metrics</h3><div class="cards">{cards}</div>')
    if metadata:
        parts.append(
            '<h3>Metadata</h3><p class="note">Columns carried from the questions or the '
            "dataset, not scores.</p>"
            f'<div class="cards">{metadata}</div>'
        )
    parts.append(_distributions(run))
    parts.append(_diagnostics(run))
    parts.append(_questions(run))
    parts.append("</section>")
    return "".join(parts)


# -- the comparison ---------------------------------------------------------------------------


def _format_value(value: float, binary: bool) -> str:
    return _percent(value) if binary else f"{value:.4f}"


def _format_change(value: float, binary: bool) -> str:
    return f"{value * 100:+.1f} pts" if binary else f"{value:+.4f}"


def _comparison_table(view: RunComparisonView, significance: str) -> str:
    metrics = view.comparison.metrics
    scales = {
        kind: max(
            (
                max(abs(m.difference), abs(m.interval.low), abs(m.interval.high))
                if m.interval
                else abs(m.difference)
                for m in metrics
                if m.kind is kind
            ),
            default=1.0,
        )
        for kind in MetricKind
    }
    rows = []
    for metric in metrics:
        binary = metric.kind is MetricKind.BINARY
        interval = (
            "n/a"
            if metric.interval is None
            else f"{_format_change(metric.interval.low, binary)} to "
            f"{_format_change(metric.interval.high, binary)}"
        )
        verdict = metric.verdict
        good = None if verdict not in ("better", "worse") else verdict == "better"
        plot = interval_svg(
            metric.difference,
            metric.interval.low if metric.interval else None,
            metric.interval.high if metric.interval else None,
            scales[metric.kind],
            good,
        )
        counts = metric.counts
        if binary and counts is not None:
            before = (
                f"{counts.baseline_successes}/{counts.total} ({_percent(metric.baseline_value)})"
            )
            after = f"{counts.run_successes}/{counts.total} ({_percent(metric.run_value)})"
        else:
            before = _format_value(metric.baseline_value, binary)
            after = _format_value(metric.run_value, binary)
        name = metric.metric + (" (lower is better)" if metric.lower_is_better else "")
        rows.append(
            f"<tr><td>{escape(name)}</td><td>{metric.paired_count}</td>"
            f"<td>{escape(before)}</td><td>{escape(after)}</td>"
            f"<td>{escape(_format_change(metric.difference, binary))}</td>"
            f"<td>{escape(interval)}</td><td>{plot}</td>"
            f"<td>{_p(metric.p_value)}</td><td>{_p(metric.holm_p_value)}</td>"
            f'<td class="{escape(verdict if good is not None else "")}">{escape(verdict)}</td></tr>'
        )
    return (
        '<table class="cmp"><thead><tr><th>Metric</th><th>n</th><th>Baseline</th><th>Run</th>'
        f"<th>Change</th><th>{escape(significance)} CI</th><th></th><th>p</th><th>Holm p</th>"
        f"<th>Verdict</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _p(value: float) -> str:
    return "&lt;0.0001" if value < 0.0001 else f"{value:.4f}"


def _flip_side(title: str, value: int, answer: str, reasoning: str) -> str:
    return (
        f'<div><h5>{escape(title)}: <span class="v{value}">{value}</span></h5>'
        f"<h5>Answer</h5><p>{escape(answer)}</p>"
        f"<h5>Reasoning</h5><p>{escape(reasoning or '(none)')}</p></div>"
    )


def _flips(group: FlipGroup, view: RunComparisonView, baseline: str, run: str) -> str:
    count = len(group.shown) + len(group.more)
    parts = [f"<h4>{escape(group.metric)}: {count} question(s) got {group.direction}</h4>"]
    for flip in group.shown:
        parts.append(
            '<article class="flip"><header>'
            f'<a href="#r{view.run_index}q{flip.run_question_number}">Question '
            f"{_numbers_text(flip.question_number, flip.run_question_number)}</a> · "
            f"{escape(group.metric)} "
            f'<span class="v{flip.baseline_value}">{flip.baseline_value}</span> → '
            f'<span class="v{flip.run_value}">{flip.run_value}</span> · '
            f'{escape(flip.question)}</header><div class="sides">'
            + _flip_side(
                f"Baseline {baseline}",
                flip.baseline_value,
                flip.baseline_answer,
                flip.baseline_reasoning,
            )
            + _flip_side(run, flip.run_value, flip.run_answer, flip.run_reasoning)
            + "</div></article>"
        )
    if group.more:
        parts.append('<p class="note">Also flipped (open them in the run\'s table):</p>')
        parts.append(_question_links(view.run_index, group.more))
    return "".join(parts)


def _numbers_text(number: int, run_number: int) -> str:
    """``12``, or ``12 (run: 30)`` when the run numbers the question differently."""
    return str(number) if number == run_number else f"{number} (run: {run_number})"


def _drops(group: DropGroup, view: RunComparisonView) -> str:
    direction = "rose" if group.lower_is_better else "fell"
    items = "".join(
        f'<li><a href="#r{view.run_index}q{drop.run_question_number}">'
        f"{_numbers_text(drop.question_number, drop.run_question_number)}</a> "
        f"{drop.baseline_value:.4f} → {drop.run_value:.4f} "
        f"({drop.run_value - drop.baseline_value:+.4f}) "
        f'<span class="mute">{escape(drop.question)}</span></li>'
        for drop in group.shown
    )
    return (
        f"<h4>{escape(group.metric)}: {group.total} question(s) {direction}; the largest "
        f'changes</h4><ul class="drops">{items}</ul>'
    )


def _comparison_section(comparison: ComparisonView, model: ReportModel) -> str:
    baseline = model.runs[0].label
    parts = [
        '<section class="tab" id="cmp" data-tab="Comparison">',
        f"<h2>Comparison<small>baseline: {escape(baseline)}</small></h2>",
    ]
    if comparison.error is not None or comparison.report is None:
        parts.append(f'<p class="note">Not compared: {escape(comparison.error or "")}.</p>')
        parts.append("</section>")
        return "".join(parts)
    report = comparison.report
    level = f"{comparison.confidence_level:.0%}"
    parts.append(
        '<p class="note">The statistics of <code>rag-eval compare</code>: for 0/1 metrics '
        "McNemar's exact test and Newcombe's paired interval (change in percentage points); "
        "for scores the paired bootstrap (interval and p from the same 9,999 resamples). "
        f"Significant: Holm-adjusted p ≤ {report.significance_level:g} over all "
        f"{report.holm_family_size} comparison(s) of this report; n.s. = not significant.</p>"
    )
    for view in comparison.runs:
        result = view.comparison
        run_label = model.runs[view.run_index].label
        parts.append(f'<h3 class="plain">{escape(run_label)} against {escape(baseline)}</h3>')
        notes = [f"{result.shared_questions} question(s) in both"]
        if result.pairing is not None and result.pairing.by_text:
            notes.append(
                "the run numbers its questions differently: paired by question text "
                "(question numbers are the baseline's)"
            )
        if result.only_in_baseline:
            notes.append(f"{len(result.only_in_baseline)} only in the baseline (left out)")
        if result.only_in_run:
            notes.append(f"{len(result.only_in_run)} only in the run (left out)")
        parts.append(f'<p class="note">{escape("; ".join(notes))}.</p>')
        if result.metrics:
            parts.append(_comparison_table(view, level))
        for skipped in result.skipped:
            parts.append(
                f'<p class="note">{escape(skipped.metric)}: not compared '
                f"({escape(skipped.reason)}).</p>"
            )
        if view.flips:
            parts.append("<h3>Questions whose score flipped</h3>")
            parts += [_flips(group, view, baseline, run_label) for group in view.flips]
        if view.drops:
            parts.append("<h3>Largest drops in scores</h3>")
            parts += [_drops(group, view) for group in view.drops]
    parts.append("</section>")
    return "".join(parts)


# -- data for the script ----------------------------------------------------------------------


def _script_data(model: ReportModel) -> dict[str, object]:
    return {
        "runs": [
            {
                "label": run.label,
                "columns": [[column.name, column.role] for column in run.columns],
                "lower": [
                    position
                    for position, column in enumerate(run.columns)
                    if column.role in (BINARY, CONTINUOUS)
                    and column.name.casefold() in LOWER_IS_BETTER
                ],
                "contexts": run.has_contexts,
            }
            for run in model.runs
        ]
    }


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


def render_report(model: ReportModel) -> str:
    """The whole report page."""
    total = sum(len(run.rows) for run in model.runs)
    if len(model.runs) > 1:
        what = f"comparison of {len(model.runs)} runs ({total} rows)"
    else:
        what = f"{total} question(s)"
    table_styles = "".join(_table_style(run) for run in model.runs)
    body = [
        '<header class="top">',
        f"<h1>{escape(model.title)}</h1>",
        f'<p class="meta">Generated {escape(model.generated_at)} by rag-eval '
        f"{escape(model.tool_version)} · {escape(what)}</p>",
        '<nav id="tabs" class="tabs" hidden aria-label="Sections"></nav>',
        "</header><main>",
        '<noscript><p class="note">JavaScript is off: everything is shown in full; sorting, '
        "filters, search and the contexts need it.</p></noscript>",
    ]
    if model.comparison is not None:
        body.append(_comparison_section(model.comparison, model))
    body += [_run_section(run, len(model.runs)) for run in model.runs]
    body.append("</main>")
    data = script_json(_script_data(model))
    body.append(f'<script type="application/json" id="report-data">{data}</script>')
    if model.contexts is not None:
        body.append(
            f'<script type="application/octet-stream" id="contexts">'
            f"{contexts_payload(model.contexts)}</script>"
        )
    body.append(f"<script>{SCRIPT}</script>")
    policy = escape(content_security_policy(SCRIPT))
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="rag-eval">'
        f"<title>{escape(model.title)}</title><style>{STYLE}{table_styles}</style></head><body>"
    )
    return head + "".join(body) + "</body></html>\n"
