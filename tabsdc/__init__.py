"""Tabular statistical disclosure limitation."""
