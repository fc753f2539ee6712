"""Model lifecycle: one module per kind (retriever, reranker, ranker, detector, tagger) with its train,
retrain step and evaluation; the verbs over the registry (kinds.py; the registry itself and the loaders
are in the models room: core/model_kinds.py); the promotion rule (promotion.py), relinking after a change
(relinking.py), versions, and retrain's plan and report."""
