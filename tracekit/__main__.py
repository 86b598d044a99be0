"""``python -m tracekit`` runs the CLI (for machines where the package is not installed)."""

from tracekit.cli import main

if __name__ == "__main__":
    main()
