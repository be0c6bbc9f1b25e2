"""``rag-eval convert`` (placeholder until the convert helper lands)."""


def convert_command() -> None:
    """Convert RAG output JSON into rag_answers.csv."""
    raise NotImplementedError
