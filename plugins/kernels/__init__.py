"""Built-in kernel plugins."""
