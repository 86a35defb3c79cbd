"""The `voirdire validate` command (registered on import)."""
