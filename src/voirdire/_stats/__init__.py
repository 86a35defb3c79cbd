"""Shared statistical machinery (private): interval construction from resampling output."""
