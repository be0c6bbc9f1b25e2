"""``rag-eval evaluate`` (placeholder until the evaluate helper lands)."""


def evaluate_command() -> None:
    """Judge RAG answers with Claude."""
    raise NotImplementedError
