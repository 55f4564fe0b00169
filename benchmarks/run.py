"""Run every benchmark script in this folder (``bench_*.py``), one after the other.

Usage: ``python benchmarks/run.py [--quick]``; ``--quick`` is passed on to each script.
"""

import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent
failed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"\n### {script.name}", flush=True)
    if subprocess.call([sys.executable, str(script), *sys.argv[1:]]) != 0:
        failed.append(script.name)
sys.exit(f"failed: {', '.join(failed)}" if failed else 0)
