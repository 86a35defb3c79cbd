"""The `voirdire estimate` command (registered on import)."""
