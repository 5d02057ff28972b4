"""manager."""
