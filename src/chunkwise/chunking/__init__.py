"""Chunking: boundary finders per strategy, one packer under a hard cap."""
