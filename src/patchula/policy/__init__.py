"""Pure decisions: current, latest and eligible releases, and the release-age policy."""

from patchula.policy.evaluate import evaluate
from patchula.policy.release_age import ReleaseAgePolicy, UnknownAge

__all__ = ["ReleaseAgePolicy", "UnknownAge", "evaluate"]
