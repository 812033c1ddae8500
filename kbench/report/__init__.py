"""The HTML report: plots and jinja2 templates."""
