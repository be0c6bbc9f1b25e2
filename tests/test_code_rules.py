"""Rules of the code itself, read from the source with ``ast``: functions a person can hold
in mind.

**No function body over 60 lines.** A function's body is counted from its first statement
after the docstring to the last line of its last statement, blank and comment lines
between them included. Not counted: the decorators, the signature (so a Typer command's
option declarations never count, only what the command does) and the docstring.

**Declarative tables are exempt.** A function whose body (after the docstring) is one
``return`` of a dict, list, tuple or set display is a table written as a function (a
catalogue of options, metrics, aliases): it is read entry by entry, not held in mind as a
whole, so its length is not limited. Nothing else is exempt; a table that needs code around
it belongs in a module-level constant.

Every function is checked, methods and nested functions included, under its qualified name
(``path:Class.method``, ``path:outer.inner``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rag_evaluator"
MAX_BODY_LINES = 60

# Functions allowed over the limit: none. An entry must go once its function is short.
STILL_LONG: frozenset[str] = frozenset()

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_TABLE_DISPLAYS = (ast.Dict, ast.List, ast.Tuple, ast.Set)


def body_lines(function: _FunctionNode) -> int:
    """Lines from the first statement after the docstring to the end of the last one."""
    body = function.body
    if (
        isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    last = body[-1].end_lineno or body[-1].lineno
    return last - body[0].lineno + 1


def is_declarative_table(function: _FunctionNode) -> bool:
    """One ``return`` of a dict, list, tuple or set display (after an optional docstring)."""
    statements = [
        statement
        for statement in function.body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]
    return (
        len(statements) == 1
        and isinstance(statements[0], ast.Return)
        and isinstance(statements[0].value, _TABLE_DISPLAYS)
    )


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, _FunctionNode]]:
    """Every function under ``tree`` with its qualified name (``Class.method``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, _FunctionNode):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def long_functions(source: str, where: str) -> dict[str, int]:
    """``where:qualified name`` -> body lines, for each function of ``source`` over the limit."""
    found: dict[str, int] = {}
    for name, function in functions(ast.parse(source)):
        lines = body_lines(function)
        if lines > MAX_BODY_LINES and not is_declarative_table(function):
            found[f"{where}:{name}"] = lines
    return found


def package_long_functions() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE.parent).as_posix()
        found.update(long_functions(path.read_text(encoding="utf-8"), where))
    return found


def test_no_function_body_is_over_60_lines() -> None:
    too_long = {
        name: lines for name, lines in package_long_functions().items() if name not in STILL_LONG
    }
    listed = "\n".join(f"  {name}: {lines} lines" for name, lines in sorted(too_long.items()))
    assert not too_long, (
        f"Function bodies over {MAX_BODY_LINES} lines (split each by what it decides):\n{listed}"
    )


def test_the_allow_list_names_only_functions_still_too_long() -> None:
    fixed = sorted(STILL_LONG - set(package_long_functions()))
    assert not fixed, f"Remove from STILL_LONG, they are short now: {', '.join(fixed)}"


def _function_source(name: str, body: list[str], *, docstring: bool = False) -> str:
    lines = [f"def {name}(value: int) -> object:"]
    if docstring:
        lines += ['    """A docstring', "", '    of several lines."""']
    lines += [f"    {line}" if line else "" for line in body]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("statements", "flagged"), [(60, False), (61, True)])
def test_the_rule_counts_the_body_after_the_docstring(statements: int, flagged: bool) -> None:
    body = [f"value += {index}" for index in range(statements - 1)] + ["return value"]
    source = _function_source("steps", body, docstring=True)
    expected = {"mod.py:steps": statements} if flagged else {}
    assert long_functions(source, "mod.py") == expected


def test_blank_and_comment_lines_inside_a_body_count_and_a_long_signature_does_not() -> None:
    body = [
        "value += 1",
        "# why",
        "",
        *[f"value += {index}" for index in range(57)],
        "return value",
    ]
    signature = "def command(\n" + "".join(f"    option_{i}: int = {i},\n" for i in range(80))
    source = signature + ") -> int:\n" + "".join(f"    {line}\n" for line in body)
    assert long_functions(source, "mod.py") == {"mod.py:command": 61}
    assert long_functions(source.replace("    # why\n", ""), "mod.py") == {}


def test_methods_and_nested_functions_are_named_by_where_they_are() -> None:
    body = "".join(f"            value += {index}\n" for index in range(61))
    source = (
        "class Engine:\n"
        "    def run(self, value: int) -> int:\n"
        "        def step(value: int) -> int:\n"
        f"{body}"
        "            return value\n"
        "        return step(value)\n"
    )
    # The outer function's body holds the nested one's lines too.
    assert long_functions(source, "mod.py") == {
        "mod.py:Engine.run": 64,
        "mod.py:Engine.run.step": 62,
    }


def test_a_table_returned_whole_is_exempt_but_code_around_it_is_not() -> None:
    entries = [f"    {index}: 'entry {index}'," for index in range(70)]
    table = ["return {", *entries, "}"]
    assert long_functions(_function_source("table", table, docstring=True), "mod.py") == {}
    with_code = ["value += 1", *table]
    assert long_functions(_function_source("table", with_code), "mod.py") == {"mod.py:table": 73}
