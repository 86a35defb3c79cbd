"""The `voirdire demo` command (registered on import)."""
