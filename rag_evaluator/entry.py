"""The ``rag-eval`` entry point: the command line's modules are imported inside it, so that a
Ctrl-C while they load (the SDK takes a moment) ends quietly with exit code 130 rather than a
traceback."""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    """Console-script entry point."""
    try:
        from rag_evaluator.cli.app import main as run_cli

        run_cli()
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        sys.exit(EXIT_INTERRUPTED)
