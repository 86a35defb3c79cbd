"""The `voirdire simulate` command (registered on import)."""
