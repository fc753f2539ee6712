"""Model lifecycle: the kinds registry, each kind's train / retrain / evaluate / load, the promotion
rule, versions, and retrain's plan and report."""
