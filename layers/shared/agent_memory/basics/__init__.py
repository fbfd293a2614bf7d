"""The basics every layer uses: settings, the clock, deadlines, typed errors, logging and metrics."""
