"""The nightly consolidation: the planner (``planner``), the worker that folds one group (``worker``, its fold
in ``folding``), the queue between them (``queue``) and one message's delivery (``delivery``)."""
