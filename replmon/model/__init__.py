"""Frozen pydantic records: one sample model per source, the source status, the Tick."""
