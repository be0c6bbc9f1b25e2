"""rag-eval: score RAG answers against a golden set."""

__version__ = "0.1.0"
