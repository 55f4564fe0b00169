"""``python -m tabsdc.cli``: the ``tabsdc`` command line."""

from tabsdc.cli._main import main

raise SystemExit(main())
