"""Runnable examples: a terminal chat agent with memory (``python -m examples.agent_chat``) and ``make demo``."""
