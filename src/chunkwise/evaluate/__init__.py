"""Evaluation: golden sets, metrics (pure functions), benchmark importers. Nothing heavy is imported here."""
