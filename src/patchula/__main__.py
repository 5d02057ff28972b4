"""``python -m patchula``."""

from patchula.cli import main

main()
