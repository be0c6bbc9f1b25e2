"""rag-eval's pytest plugin, loaded through the ``pytest11`` entry point (no import needed).

    def test_answers(rag_eval):
        rag_eval.check("tests/golden.jsonl", metrics="lexical,quality",
                       thresholds={"keyword_coverage": 0.6, "dont_know<=": 0.1})

``rag_eval.check`` scores a dataset file or a list of cases and fails the test, with the
failing questions, when a threshold is missed; ``@pytest.mark.rag_eval(...)`` gives a test's
checks their defaults. Options: ``--rag-eval-model``, ``--rag-eval-cache-dir``,
``--rag-eval-no-cache``, ``--rag-eval-max-cost`` (each also an ini setting). Importing this
module stays cheap: pytest loads it in every session of an environment with rag-eval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rag_evaluator.testing.scoring import CheckOptions
    from rag_evaluator.testing.verdict import CheckReport

MARKER = "rag_eval"
_MARKER_KEYWORDS = ("data", "metrics", "thresholds", "rubric")
DEFAULT_MODEL = "sonnet"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rag-eval", "rag-eval checks (the rag_eval fixture)")
    group.addoption(
        "--rag-eval-model",
        help="the judge model of rag_eval checks: sonnet, haiku, opus, a model id or "
        f"PROVIDER/MODEL (default: {DEFAULT_MODEL})",
    )
    group.addoption(
        "--rag-eval-cache-dir",
        help="the response cache folder of rag_eval checks (default: RAG_EVAL_CACHE_DIR, "
        "else the user cache folder)",
    )
    group.addoption(
        "--rag-eval-no-cache",
        action="store_true",
        default=None,
        help="call the model for every judged question, neither reading nor writing the cache",
    )
    group.addoption(
        "--rag-eval-max-cost",
        help="dollars the judged calls of each rag_eval check may spend at most",
    )
    parser.addini("rag_eval_model", "the judge model of rag_eval checks", default="")
    parser.addini("rag_eval_cache_dir", "the response cache folder of rag_eval checks", default="")
    parser.addini(
        "rag_eval_cache", "whether rag_eval checks use the cache", type="bool", default=True
    )
    parser.addini("rag_eval_max_cost", "dollars each rag_eval check may spend", default="")


def pytest_configure(config: pytest.Config) -> None:
    # A bad option stops the session at once, as pytest's own usage errors do.
    _max_cost(_setting(config, "rag_eval_max_cost", "rag_eval_max_cost"))
    config.addinivalue_line(
        "markers",
        f"{MARKER}(data=None, metrics=None, thresholds=None, rubric=None): defaults of the "
        "test's rag_eval.check calls",
    )


def _setting(config: pytest.Config, option: str, ini: str) -> str:
    given = config.getoption(option)
    return str(given if given is not None else config.getini(ini)).strip()


def _max_cost(text: str) -> float | None:
    if not text:
        return None
    try:
        dollars = float(text)
    except ValueError:
        dollars = math.nan
    if not math.isfinite(dollars) or dollars < 0:
        raise pytest.UsageError(
            f"--rag-eval-max-cost {text!r} is not an amount. Give dollars, e.g. 0.50"
        )
    return dollars


def check_options(config: pytest.Config) -> CheckOptions:
    """The options of this session's checks: command line, else ini file, else defaults."""
    from rag_evaluator.testing.scoring import CheckOptions

    no_cache = config.getoption("rag_eval_no_cache")
    use_cache = not no_cache if no_cache is not None else bool(config.getini("rag_eval_cache"))
    # Paths are read as the CLI reads them: from where pytest runs, or, written in the ini
    # file, from that file's folder.
    here = config.invocation_params.dir
    cache_dir: Path | None = None
    if config.getoption("rag_eval_cache_dir"):
        cache_dir = here / Path(config.getoption("rag_eval_cache_dir")).expanduser()
    elif str(config.getini("rag_eval_cache_dir")).strip():
        ini_folder = config.inipath.parent if config.inipath is not None else here
        cache_dir = ini_folder / Path(str(config.getini("rag_eval_cache_dir")).strip()).expanduser()
    return CheckOptions(
        model=_setting(config, "rag_eval_model", "rag_eval_model") or DEFAULT_MODEL,
        use_cache=use_cache,
        cache_dir=cache_dir,
        max_cost=_max_cost(_setting(config, "rag_eval_max_cost", "rag_eval_max_cost")),
        working_directory=here,
    )


class RagEval:
    """The ``rag_eval`` fixture: scores questions with rag-eval's metrics and applies the
    ``--fail-under`` / ``--fail-over`` gates."""

    def __init__(self, options: CheckOptions, defaults: Mapping[str, Any]) -> None:
        self.options = options
        self.defaults = dict(defaults)

    def score(
        self,
        data: str | Path | Sequence[Mapping[str, Any]] | None = None,
        *,
        metrics: str | Sequence[str] | None = None,
        thresholds: Mapping[str, float | str] | None = None,
        rubric: str | Path | None = None,
    ) -> CheckReport:
        """The report of a check, whether or not it passed (``check`` fails the test)."""
        from rag_evaluator.errors import UsageError
        from rag_evaluator.testing.scoring import load_check_inputs, score_check
        from rag_evaluator.testing.thresholds import parse_check_thresholds
        from rag_evaluator.testing.verdict import check_verdict

        data = data if data is not None else self.defaults.get("data")
        metrics = metrics if metrics is not None else self.defaults.get("metrics")
        thresholds = thresholds if thresholds is not None else self.defaults.get("thresholds")
        rubric = rubric if rubric is not None else self.defaults.get("rubric")
        if data is None or not metrics:
            raise UsageError(
                "rag_eval.check needs the questions and the metric families: pass e.g. "
                "rag_eval.check('golden.jsonl', metrics='lexical', thresholds={...}), or give "
                "them in @pytest.mark.rag_eval(data=..., metrics=...)"
            )
        root = self.options.working_directory
        inputs = load_check_inputs(data, root)
        rubric_path = None if rubric is None else root / Path(rubric)
        scored = score_check(
            inputs, metrics, parse_check_thresholds(thresholds), self.options, rubric_path
        )
        return check_verdict(scored)

    def check(
        self,
        data: str | Path | Sequence[Mapping[str, Any]] | None = None,
        *,
        metrics: str | Sequence[str] | None = None,
        thresholds: Mapping[str, float | str] | None = None,
        rubric: str | Path | None = None,
    ) -> CheckReport:
        """Score ``data`` (a dataset file, or cases: mappings with question, answer,
        ground_truth, contexts...) with the ``metrics`` families of ``evaluate --metrics``;
        fail the test, listing the failing questions, when a threshold is missed or a
        question cannot be scored. ``thresholds``: ``{"rougeL": 0.5, "dont_know<=": 0.1}``
        (``<=`` marks a maximum). Returns the report of a check that passed."""
        from rag_evaluator.errors import RagEvalError

        try:
            report = self.score(data, metrics=metrics, thresholds=thresholds, rubric=rubric)
        except RagEvalError as exc:
            # Failed outside the except block: the message alone, no chained traceback.
            problem = f"rag-eval: {exc}"
        else:
            if report.passed:
                return report
            problem = report.message
        pytest.fail(problem, pytrace=False)


@pytest.fixture
def rag_eval(request: pytest.FixtureRequest) -> RagEval:
    """Checks of RAG answers against thresholds (see ``RagEval.check``)."""
    marker = request.node.get_closest_marker(MARKER)
    defaults: dict[str, Any] = {}
    if marker is not None:
        unknown = sorted(set(marker.kwargs) - set(_MARKER_KEYWORDS))
        if unknown or marker.args[1:]:
            pytest.fail(
                f"@pytest.mark.{MARKER} takes {', '.join(_MARKER_KEYWORDS)} (got "
                f"{', '.join(unknown) or 'extra positional arguments'})",
                pytrace=False,
            )
        defaults = {"data": marker.args[0]} if marker.args else {}
        defaults.update(marker.kwargs)
    return RagEval(check_options(request.config), defaults)
