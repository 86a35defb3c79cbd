"""``python -m voirdire``: the command line."""

from .cli import main

main()
