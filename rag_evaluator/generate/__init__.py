"""``rag-eval generate`` and ``rag-eval review``, their pure parts.

documents.py   chunking a document's text by paragraphs, with character offsets
sampling.py    question types and their mix, chunks spread across documents, multi-hop pairs
prompts.py     the generator's system prompt, user message, output schema and reply parser
filters.py     grounding, duplicates, quoting, empty and over-long outputs
task.py        one question's generation as a model-judged task (the engine runs it)
golden.py      the rows of questions.csv and ground_truth.csv
fingerprint.py what ties a generate checkpoint to its documents, options and model
summary.py     the summary of a generate run
review.py      review cards (highlighted supporting sentences) and the editor's file format
"""
