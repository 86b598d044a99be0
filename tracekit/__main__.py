"""``python -m tracekit`` runs the CLI (for machines where the package is not installed)."""

from tracekit.cli import entry

if __name__ == "__main__":
    entry()
