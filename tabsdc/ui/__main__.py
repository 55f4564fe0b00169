"""``python -m tabsdc.ui``: start the web app (see :mod:`tabsdc.cli._ui`)."""

from tabsdc.cli._ui import main

if __name__ == "__main__":  # the worker processes import this module again
    raise SystemExit(main())
