"""repos."""
