"""Built-in algorithm plugins, one module per algorithm family."""
