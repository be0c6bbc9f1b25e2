"""Offline metric families as pure functions on plain data.

``lexical``, ``overlap``, ``retrieval`` and ``semantic`` hold the metrics; ``registry`` names
them per family for the evaluate run. The public import surface is ``rag_evaluator.metrics``.
"""
