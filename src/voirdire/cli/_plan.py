"""The `voirdire plan` command (registered on import)."""
