"""People's control of their memory: export, erase, usage, and the record of what each turn was shown."""
