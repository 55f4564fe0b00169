"""``python -m tabsdc.cli``: the ``tabsdc`` command line."""

from tabsdc.cli.main import main

raise SystemExit(main())
