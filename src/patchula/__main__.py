"""``python -m patchula``."""

from patchula.cli import console_main

console_main()
