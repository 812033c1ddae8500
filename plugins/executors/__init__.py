"""Built-in executor plugins: one module per place tasks run."""
