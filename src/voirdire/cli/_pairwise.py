"""The `voirdire pairwise` command (registered on import)."""
