"""The `voirdire assign` command (registered on import)."""
