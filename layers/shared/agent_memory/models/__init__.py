"""Ports to what cannot run in-process: chat models (``chat``) and the prompts we send them (``prompts``)."""
