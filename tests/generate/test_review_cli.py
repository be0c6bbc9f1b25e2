"""``rag-eval review``: a person at a real terminal (a pseudo-terminal driving the keys)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sys
from pathlib import Path

import pexpect
import pytest
from evaluate_support import prepare_workspace, run_cli
from fakes.anthropic_server import FakeAnthropicServer
from generate_support import DOCS, generate_arguments, read_golden_set, read_rows, write_csv
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.generate.review.table import (
    FACTS_MARKER,
    GROUND_TRUTH_MARKER,
    QUESTION_MARKER,
    EditedPair,
    EditError,
    RawTable,
    ReviewCard,
    ReviewTable,
    parse_edit_file,
    render_edit_file,
)

KEYS_PROMPT = "[a]ccept  [r]eject  [e]dit  [s]kip  [q]uit?"
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
# rich's "bold black on yellow", the highlight of a supporting sentence.
HIGHLIGHT = "\x1b[1;30;43m"
# Under NO_COLOR: bold reverse video, a mark that is no colour.
PLAIN_HIGHLIGHT = "\x1b[1;7m"
# A colour of the text or background (30-49, 90-107), alone or among other attributes.
_COLOUR_CODE = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


@pytest.fixture
def golden_set(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A generated golden set of 4 factual questions in the test's working folder."""
    workspace = prepare_workspace(tmp_path, monkeypatch)
    result = run_cli([*generate_arguments(DOCS, count=4), "--types", "factual", "--yes"])
    assert result.exit_code == 0, result.output
    return workspace.directory


def _editor(directory: Path, question: str, answer: str) -> str:
    """An $EDITOR command: a script that rewrites the question and the answer in place."""
    script = directory / "edit.py"
    script.write_text(
        "import sys\n"
        "path = sys.argv[1]\n"
        "lines = open(path, encoding='utf-8').read().split('\\n')\n"
        f"lines[lines.index({QUESTION_MARKER!r}) + 1] = {question!r}\n"
        f"lines[lines.index({GROUND_TRUTH_MARKER!r}) + 1] = {answer!r}\n"
        "open(path, 'w', encoding='utf-8').write('\\n'.join(lines))\n",
        encoding="utf-8",
    )
    return f'"{sys.executable}" "{script}"'


class Terminal:
    """``rag-eval review`` in a pseudo-terminal; ``raw`` keeps the escape codes."""

    def __init__(
        self,
        cwd: Path,
        *arguments: str,
        editor: str = "",
        columns: int = 200,
        no_color: bool | None = None,
    ) -> None:
        env = dict(os.environ)
        # None: the colours of the environment the suite runs in (NO_COLOR or not).
        if no_color is not None:
            # What the highlight looks like is the question: a terminal that can show it.
            env["TERM"] = "xterm-256color"
        if no_color is True:
            env["NO_COLOR"] = "1"
        elif no_color is False:
            env.pop("NO_COLOR", None)
        if editor:
            env["EDITOR"] = editor
            env.pop("VISUAL", None)
        self.screen = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "rag_evaluator", "review", *arguments],
            cwd=str(cwd),
            env=env,
            encoding="utf-8",
            timeout=30,
            dimensions=(60, columns),
        )
        self.child.logfile_read = self.screen

    def press(self, key: str) -> None:
        """Wait for the keys prompt, then press one key (no Enter)."""
        self.child.expect_exact(KEYS_PROMPT)
        self.child.send(key)

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    @property
    def raw(self) -> str:
        return self.screen.getvalue()

    @property
    def text(self) -> str:
        return " ".join(_ESCAPE.sub("", self.raw).split())


def test_accept_reject_edit_and_skip_through_a_real_terminal(golden_set: Path) -> None:
    before = read_golden_set(golden_set)
    edited_question = "Which kit does a new field engineer get?"
    edited_answer = "A TideGauge T4 kit, a rugged tablet and a satellite messenger."
    terminal = Terminal(golden_set, editor=_editor(golden_set, edited_question, edited_answer))
    terminal.press("a")  # question 1
    terminal.press("x")  # not a key: ignored, the prompt waits on
    terminal.child.send("r")  # question 2
    terminal.press("e")  # question 3: edited, shown again
    terminal.child.expect_exact("(edited)")
    terminal.press("a")
    terminal.press("s")  # question 4
    assert terminal.finish() == 0
    text = terminal.text
    assert "Question 1 · 1 of 4 to review · factual" in text
    assert before.questions[0]["Question"] in text
    assert before.ground_truth[0]["Ground Truth"] in text
    assert "This session: 2 accepted, 1 rejected, 1 edit(s), 1 skipped. Reviewed in all: 2." in text
    assert "1 pair(s) still to review: run rag-eval review again." in text

    after = read_golden_set(golden_set)
    assert [row["Question Number"] for row in after.questions] == ["1", "3", "4"]
    assert [row["Question Number"] for row in after.ground_truth] == ["1", "3", "4"]
    reviewed = {row["Question Number"]: row["Reviewed"] for row in after.ground_truth}
    assert reviewed == {"1": "accepted", "3": "accepted", "4": ""}
    edited = after.questions[1]
    assert edited["Question"] == edited_question
    assert edited["Source"] == "generated by claude-sonnet-5-5, edited in review"
    assert after.ground_truth[1]["Ground Truth"] == edited_answer
    # Provenance stays: the edit changes the texts, not where they come from.
    assert after.ground_truth[1]["Source Spans"] == before.ground_truth[2]["Source Spans"]

    again = Terminal(golden_set)
    again.press("q")
    assert again.finish() == 0
    assert "Question 4 · 1 of 1 to review" in again.text
    assert "1 pair(s) still to review" in again.text


@pytest.mark.parametrize(
    ("no_color", "highlight"),
    [(False, HIGHLIGHT), (True, PLAIN_HIGHLIGHT)],
    ids=["colour", "NO_COLOR"],
)
def test_the_supporting_sentence_is_highlighted_in_its_chunk(
    golden_set: Path, no_color: bool, highlight: str
) -> None:
    truth = read_rows(golden_set / "ground_truth.csv")[0]
    (sentence,) = json.loads(truth["Supporting Sentences"])
    terminal = Terminal(golden_set, columns=80, no_color=no_color)
    terminal.press("q")
    terminal.finish()
    first_words = " ".join(sentence.split()[:3])
    assert highlight + first_words in terminal.raw
    if no_color:
        assert not _COLOUR_CODE.search(terminal.raw)
    span = json.loads(truth["Source Spans"])[0]
    assert f"{span['file']}, characters {span['start']}-{span['end']}" in terminal.text
    # The whole chunk is on screen, folded inside its box, none of it cut at the border.
    (context,) = json.loads(truth["Relevant Contexts"])
    boxed = [
        line.strip().strip("│")
        for line in _ESCAPE.sub("", terminal.raw).splitlines()
        if line.strip().startswith("│")
    ]
    assert " ".join(" ".join(boxed).split()) == " ".join(context.split())


def test_every_decision_is_saved_at_once_so_a_killed_review_resumes(golden_set: Path) -> None:
    terminal = Terminal(golden_set)
    terminal.press("a")
    terminal.press("r")
    terminal.child.expect_exact(KEYS_PROMPT)  # question 3 is on screen: nothing decided yet
    terminal.child.kill(signal.SIGKILL)
    terminal.child.close()
    golden = read_golden_set(golden_set)
    assert [row["Question Number"] for row in golden.questions] == ["1", "3", "4"]
    assert [row["Reviewed"] for row in golden.ground_truth] == ["accepted", "", ""]

    resumed = Terminal(golden_set)
    resumed.press("a")
    resumed.press("a")
    assert resumed.finish() == 0
    assert "Question 3 · 1 of 2 to review" in resumed.text
    assert "Every pair is reviewed." in resumed.text
    rows = read_rows(golden_set / "ground_truth.csv")
    assert [row["Reviewed"] for row in rows] == ["accepted"] * 3


def test_ctrl_c_stops_with_the_decisions_kept(golden_set: Path) -> None:
    terminal = Terminal(golden_set)
    terminal.press("a")
    terminal.press("\x03")
    assert terminal.finish() == 130
    assert "Interrupted; every decision made so far is saved" in terminal.text
    rows = read_rows(golden_set / "ground_truth.csv")
    assert rows[0]["Reviewed"] == "accepted"


def test_an_edit_that_breaks_the_file_changes_nothing(golden_set: Path) -> None:
    script = golden_set / "wipe.py"
    script.write_text("import sys\nopen(sys.argv[1], 'w').write('gone')\n", encoding="utf-8")
    before = (golden_set / "questions.csv").read_text("utf-8")
    terminal = Terminal(golden_set, editor=f'"{sys.executable}" "{script}"')
    terminal.press("e")
    terminal.press("q")
    assert terminal.finish() == 0
    assert "Nothing was changed: the marker line [Question] is missing." in terminal.text
    assert (golden_set / "questions.csv").read_text("utf-8") == before


def test_accept_all_for_scripts(golden_set: Path) -> None:
    result = run_cli(["review", "--accept-all"])
    assert result.exit_code == 0, result.output
    assert "Accepted 4 pair(s); 4 reviewed in all." in result.stderr
    assert [row["Reviewed"] for row in read_rows(golden_set / "ground_truth.csv")] == [
        "accepted"
    ] * 4
    # The reviewed files are what evaluate reads.
    write_csv(
        golden_set / "rag_answers.csv",
        ["Question Number", "RAG Answer"],
        [[number, "An answer."] for number in range(1, 5)],
    )
    assert run_cli(["evaluate", "--metrics", "lexical", "--yes"]).exit_code == 0


def test_review_needs_a_terminal_unless_accept_all(golden_set: Path) -> None:
    result = run_cli(["review"])
    assert result.exit_code == 2
    assert "rag-eval review needs a terminal" in result.stderr
    assert "--accept-all" in result.stderr


def test_a_ground_truth_row_left_by_a_cut_short_rejection_is_removed(golden_set: Path) -> None:
    questions = read_rows(golden_set / "questions.csv")
    write_csv(
        golden_set / "questions.csv",
        list(questions[0]),
        [list(row.values()) for row in questions if row["Question Number"] != "2"],
    )
    result = run_cli(["review", "--accept-all"])
    assert result.exit_code == 0, result.output
    assert "held question 2 whose row in questions.csv is gone" in result.stderr
    numbers = [row["Question Number"] for row in read_rows(golden_set / "ground_truth.csv")]
    assert numbers == ["1", "3", "4"]


def test_review_of_files_it_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    missing = run_cli(["review", "--accept-all"])
    assert missing.exit_code == 2
    assert "questions.csv not found" in missing.stderr
    write_csv(tmp_path / "questions.csv", ["Question Number", "Question"], [[1, "Q?"]])
    write_csv(tmp_path / "ground_truth.csv", ["Question Number", "Answer text"], [[1, "A."]])
    no_column = run_cli(["review", "--accept-all"])
    assert no_column.exit_code == 2
    assert "has no 'Ground Truth' column" in no_column.stderr


# -- the editor's file -----------------------------------------------------------------------


def _card(question: str, answer: str, facts: tuple[str, ...]) -> ReviewCard:
    return ReviewCard(7, 1, 1, question, "factual", "", answer, facts, (), ())


_LINE = st.text(
    alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    max_size=30,
)


@given(
    question=_LINE.filter(lambda text: text.strip()),
    answer_lines=st.lists(_LINE, min_size=1, max_size=4).filter(
        lambda lines: "\n".join(lines).strip()
    ),
    facts=st.lists(_LINE.filter(lambda text: text.strip()), max_size=3),
)
def test_the_edit_file_reads_back_what_it_shows(
    question: str, answer_lines: list[str], facts: list[str]
) -> None:
    markers = (QUESTION_MARKER, GROUND_TRUTH_MARKER, FACTS_MARKER)
    lines = [question, *answer_lines, *facts]
    if any(line.strip() in markers for line in lines):
        return
    answer = "\n".join(answer_lines)
    edited = parse_edit_file(render_edit_file(_card(question, answer, tuple(facts))))
    assert edited.question == question.strip()
    assert edited.ground_truth == answer.strip()
    assert edited.required_facts == tuple(fact.strip() for fact in facts)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[Question]\nQ?\n[Ground Truth]\nA.\n", "[Required Facts] is missing"),
        ("[Question]\nQ?\n[Question]\n[Ground Truth]\nA.\n[Required Facts]\n", "appears twice"),
        ("[Question]\n\n[Ground Truth]\nA.\n[Required Facts]\n", "is empty"),
    ],
)
def test_an_unreadable_edit_file(text: str, message: str) -> None:
    with pytest.raises(EditError, match=re.escape(message)):
        parse_edit_file(text)


def test_an_edited_ground_truth_replaces_the_rows_reference_answers() -> None:
    questions = RawTable(
        "questions.csv", ["Question Number", "Question"], [["1", "Capital?"], ["2", "Planet?"]]
    )
    truth = RawTable(
        "ground_truth.csv",
        ["Question Number", "Ground Truth", "Reference Answers"],
        [["1", "Paris\nParis, France", '["Paris", "Paris, France"]'], ["2", "Mars", ""]],
    )
    table = ReviewTable(questions, truth)

    table.edit(1, EditedPair("Capital of France?", "Paris.", []))

    assert truth.rows[0][1:3] == ["Paris.", ""]  # the edited answer is the one reference
    assert truth.rows[1][1] == "Mars"
