"""Reports of scores and runs: terminal tables, ``results.json``, a static HTML report."""
