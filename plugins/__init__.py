"""kbench's built-in plugins: every module below registers components through the hooks."""
