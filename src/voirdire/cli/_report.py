"""The `voirdire report` command (registered on import)."""
