from rag_evaluator.cli import main

main()
