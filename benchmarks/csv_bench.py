"""How fast, and in how much memory, the shared CSV reader reads a large rag_answers.csv.

Generates a rag_answers.csv of ``--rows`` rows (an answer and three retrieved chunks each,
about 1.1 KB a row) and prints, with ``benchmarks/timing.py`` (interleaved repeats,
min/median/max):

1. the csv module fed by ``io.StringIO(text, newline="")``, the usual way, against the
   same csv module fed by ``storage.tables.physical_lines`` (same lines, checked), which
   ``read_csv`` uses: StringIO holds a copy of the whole text at 4 bytes per character;
2. ``read_csv`` end to end (decode, sniff, parse, resolve columns), and its peak traced
   memory as a multiple of the file size.

Run: ``.venv/bin/python benchmarks/csv_bench.py`` (about a minute on two cores).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import tempfile
import tracemalloc
from pathlib import Path

from timing import alternate, format_ratio, format_stats, machine

from rag_evaluator.inputs.tables import physical_lines, read_csv


def write_answers(path: Path, rows: int, rng: random.Random) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "RAG Answer", "Contexts"])
        for number in range(1, rows + 1):
            answer = "The answer is " + "word " * rng.randint(10, 60)
            chunks = ["chunk text " * rng.randint(10, 40) for _ in range(3)]
            writer.writerow([number, answer, json.dumps(chunks)])


def count_rows(lines: object) -> int:
    return sum(1 for _ in csv.reader(lines))  # type: ignore[arg-type]


def compare_line_sources(path: Path, repeats: int) -> None:
    text = path.read_text(encoding="utf-8")
    assert list(physical_lines(text)) == list(io.StringIO(text, newline=""))
    cases = {
        "csv on io.StringIO": lambda: count_rows(io.StringIO(text, newline="")),
        "csv on physical_lines": lambda: count_rows(physical_lines(text)),
    }
    print("1. the csv module's line source")
    stats = alternate(cases, repeats=repeats)
    print(format_stats(stats))
    print(format_ratio(stats, "csv on io.StringIO", "csv on physical_lines"))
    for name, run in cases.items():
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"  {name}: peak traced memory {peak / 1e6:,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    csv.field_size_limit(256 * 1024 * 1024)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rag_answers.csv"
        write_answers(path, arguments.rows, random.Random(1))
        size = path.stat().st_size
        print(machine())
        print(f"rag_answers.csv: {arguments.rows:,} rows, {size / 1e6:.1f} MB")

        compare_line_sources(path, arguments.repeats)

        def read() -> object:
            return read_csv(path, required=["Question Number", "RAG Answer"], optional=["Contexts"])

        print("2. read_csv end to end")
        print(format_stats(alternate({"read_csv": read}, repeats=arguments.repeats)))
        tracemalloc.start()
        read()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"  peak traced memory {peak / 1e6:,.0f} MB ({peak / size:.1f}x the file size)")


if __name__ == "__main__":
    main()
