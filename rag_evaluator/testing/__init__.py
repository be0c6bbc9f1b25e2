"""rag-eval inside pytest: the ``rag_eval`` fixture and marker (an entry point, no import).

``plugin`` holds the pytest side (options, marker, fixture); ``thresholds`` reads the
thresholds a check is given, ``scoring`` scores its questions with the library's metric
families (judged ones through ``judge_client`` and the response cache), ``verdict`` applies
the ``--fail-under`` / ``--fail-over`` gates and writes the failure message.
"""
