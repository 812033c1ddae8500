"""Built-in data-set plugins."""
