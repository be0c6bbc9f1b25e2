"""The lowest question-text similarity that matches (``--threshold``), apart from the matching
itself (numpy, rapidfuzz) so that the command line declares it without loading them."""

from __future__ import annotations

DEFAULT_THRESHOLD = 85.0
