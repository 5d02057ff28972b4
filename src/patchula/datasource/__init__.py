"""datasource."""
