"""The generate command's defaults, in a module that imports nothing: the command line
declares them without loading the generation pipeline."""

from __future__ import annotations

DEFAULT_COUNT = 50

FACTUAL = "factual"
COMPARISON = "comparison"
MULTI_HOP = "multi_hop"
UNANSWERABLE = "unanswerable"
QUESTION_TYPES = (FACTUAL, COMPARISON, MULTI_HOP, UNANSWERABLE)
DEFAULT_TYPES = "factual=3,comparison=2,multi_hop=2,unanswerable=1"

PAIRING_AUTO = "auto"
PAIRING_KEYWORDS = "keywords"
PAIRING_EMBEDDINGS = "embeddings"
PAIRINGS = (PAIRING_AUTO, PAIRING_KEYWORDS, PAIRING_EMBEDDINGS)
