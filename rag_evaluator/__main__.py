from rag_evaluator.entry import main

main()
