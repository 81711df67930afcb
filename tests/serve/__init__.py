"""Tests of chunkwise serve (a package: its conftest must not shadow tests/conftest.py)."""
