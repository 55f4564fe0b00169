"""``python -m microsdc.cli``: the ``microsdc`` command line."""

from microsdc.cli import main

raise SystemExit(main())
