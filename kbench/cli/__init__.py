"""The ``kbench`` command: click commands that parse options, call the library and print."""
