"""http: the run's fetch facade, transport, governor and HTTP caching rules.

``DEFAULT_MAX_BODY_BYTES`` lives here, a module importing nothing, so the fetcher (built at
start-up) and the transport (imported at the first request) share one value.
"""

# The default bound on a response body, on the wire and decoded: the largest real npm
# packuments are tens of MB.
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
# The bytes the response bodies being read hold together, run-wide, besides the body read first
# (which may take up to ``DEFAULT_MAX_BODY_BYTES``): ``bodies.BodyPool``.
DEFAULT_BODY_POOL_BYTES = 256 * 1024 * 1024
