"""Built-in loss plugins."""
