"""No control character from a file reaches the terminal (issue 21, item 21).

File names, column names, cells and checkpoint fields are the user's files' text: a terminal
escape sequence in one of them (``ESC ]0;title BEL``, ``ESC [2J``, a C1 ``CSI``, a
right-to-left override) must be shown escaped, whatever message or table prints it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import SAMPLE, Workspace, prepare_workspace, run_cli, write_csv, write_inputs
from fakes.anthropic_server import FakeAnthropicServer
from hypothesis import given
from hypothesis import strategies as st
from report_support import Question, write_run

from rag_evaluator.cli import console
from rag_evaluator.generate.review.table import ContextView, ReviewCard
from rag_evaluator.text.snippets import terminal_text

ESCAPE = "\x1b"
# What must never be printed raw: C0 controls but line feed and tab, DEL, C1 controls, and
# the bidirectional overrides and isolates that reorder what a line shows.
_UNSAFE = {chr(code) for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))} - {"\n", "\t"}
_UNSAFE |= set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
TITLE_SEQUENCE = "\x1b]0;pwned\x07"
CLEAR_SEQUENCE = "\x1b[2J\x1b[H"


def _unsafe_in(text: str) -> set[str]:
    return {character for character in text if character in _UNSAFE}


@given(st.text())
def test_terminal_text_leaves_no_control_character_and_hides_none(text: str) -> None:
    shown = terminal_text(text)
    assert _unsafe_in(shown) == set()
    # Escaping only adds visible text: every unsafe character becomes its escape.
    for character in _unsafe_in(text):
        assert repr(character)[1:-1] in shown
    if not _unsafe_in(text):
        assert shown == text


@given(st.text(min_size=1))
def test_every_console_message_is_escaped(text: str) -> None:
    with console.stderr_console.capture() as captured:
        console.warning(text)
        console.error(text)
        console.info(text)
        console.progress(text)
        console.table(text, [text, "v"], [[text, text]], to_stdout=False)
    assert _unsafe_in(captured.get()) == set()


def test_a_file_name_in_converts_messages_is_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_csv(tmp_path / "questions.csv", ["Question Number", "Question"], [[1, "Why?"]])
    json_dir = tmp_path / "RAG_JSON_Files"
    json_dir.mkdir()
    (json_dir / "ok.json").write_text(json.dumps([{"question": "Why?", "answer": "Because."}]))
    (json_dir / f"evil{TITLE_SEQUENCE}{CLEAR_SEQUENCE}.json").write_text("[{")
    result = run_cli(["convert"])
    assert result.exit_code == 1, result.output
    assert ESCAPE not in result.stderr and "\x07" not in result.stderr
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H.json" in result.stderr


def test_metadata_column_names_in_the_summary_are_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    column = f"Team{TITLE_SEQUENCE}\u202eX"
    write_csv(
        tmp_path / "questions.csv",
        ["Question Number", "Question", column],
        [[number, texts[0], f"ops{CLEAR_SEQUENCE}"] for number, texts in SAMPLE.items()],
    )
    result = run_cli(["evaluate", "--metrics", "lexical", "--group-by", column, "--yes"])
    assert result.exit_code == 0, result.output
    assert _unsafe_in(result.stdout) == set() and _unsafe_in(result.stderr) == set()
    assert "Team\\x1b]0;pwned\\x07\\u202eX" in result.stdout


def test_a_checkpoints_start_time_is_escaped_at_the_resume_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    space: Workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    first = run_cli(["evaluate", "--delay", "0", "--yes", "--limit", "2"])
    assert first.exit_code == 0, first.output
    (checkpoint,) = space.checkpoint_files()
    header, rest = checkpoint.read_text(encoding="utf-8").split("\n", 1)
    data = json.loads(header)
    data["created_at"] = f"2026-01-01T10:00:00{CLEAR_SEQUENCE}{TITLE_SEQUENCE}"
    checkpoint.write_text(json.dumps(data) + "\n" + rest, encoding="utf-8")
    resumed = run_cli(["evaluate", "--delay", "0", "--yes"])
    assert resumed.exit_code == 0, resumed.output
    assert "Found an unfinished run of these files started 2026-01-01 10:00:00\\x1b[2J" in (
        resumed.stderr
    )
    assert _unsafe_in(resumed.stderr) == set()


def test_a_review_card_escapes_its_texts_and_keeps_its_highlights_in_place() -> None:
    text = f"Intro {CLEAR_SEQUENCE}then the supported sentence. Outro"
    start = text.index("the supported")
    card = ReviewCard(
        question_number=7,
        position=1,
        total=1,
        question=f"Why{TITLE_SEQUENCE}?",
        question_type="factual",
        source=f"doc{ESCAPE}.md",
        ground_truth="Because.",
        required_facts=(f"fact{ESCAPE}",),
        contexts=(ContextView(f"doc{ESCAPE}.md", text, ((start, start + 22),)),),
        supporting_sentences=("the supported sentence.",),
    )
    with console.stderr_console.capture() as captured:
        console.review_card(card)
    shown = captured.get()
    assert _unsafe_in(shown) == set()
    assert "Why\\x1b]0;pwned\\x07?" in shown and "Intro \\x1b[2J\\x1b[Hthen" in shown
    # The highlighted span is still exactly the supported sentence.
    rendered = console._highlighted(text, ((start, start + 22),))
    (span,) = rendered.spans
    assert rendered.plain[span.start : span.end] == "the supported sentence"


def test_compares_json_on_stdout_escapes_them_and_stays_the_same_json(tmp_path: Path) -> None:
    metric = "score\x9b2J\u202e"
    questions = [
        Question(n, f"Q{n}?\x1b[2J", "A.", "A.", metrics={metric: n / 40}) for n in range(1, 21)
    ]
    baseline = write_run(tmp_path / "base.csv", questions)
    result = run_cli(["compare", str(baseline), str(baseline), "--json", "-"])
    assert result.exit_code == 0, result.output
    assert _unsafe_in(result.stdout) == set()
    compared = json.loads(result.stdout)["comparisons"][0]["metrics"]
    assert metric in [entry["metric"] for entry in compared]
