"""The `voirdire agree` command (registered on import)."""
