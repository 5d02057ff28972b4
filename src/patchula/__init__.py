"""patchula: a dependency freshness scanner."""

__version__ = "0.1.0"

import logging as _logging

# A library stays quiet unless the application configures logging; the CLI shows the warnings
# that matter itself (cache recovery is reported through ``Cache.warnings``).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
