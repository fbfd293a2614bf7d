"""The memory's writes and reads: remember, update_memory (and compression), the per-turn context, the
flush and the dashboard's document and notes operations."""
