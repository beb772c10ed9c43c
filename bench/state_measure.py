"""The measuring half of ``page_states.py``, run once per code tree in its own process: it
imports only ``webagent.html`` (of whichever tree ``PYTHONPATH`` names) and prints JSON rows.

    PYTHONPATH=TREE python bench/state_measure.py PAIRS.json PLANS.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def measure(pairs_path: Path, plans_path: Path) -> list[dict[str, Any]]:
    """Per pair and budget: fragments of the second state, and how many the cache answers."""
    from webagent.html.fragment import SegmentSettings
    from webagent.html.segment import segment_html

    pairs = json.loads(pairs_path.read_text(encoding="utf-8"))
    settings = {
        int(b): SegmentSettings(**p)
        for b, p in json.loads(plans_path.read_text(encoding="utf-8")).items()
    }
    rows = []
    for pair in pairs:
        for budget, plan in settings.items():
            first = segment_html(pair["a"], plan)
            second = segment_html(pair["b"], plan)
            known = {f.path + "\n" + f.html for f in first.fragments}
            hits = sum(f.path + "\n" + f.html in known for f in second.fragments)
            rows.append(
                {
                    "source": pair["source"],
                    "name": pair["name"],
                    "budget": budget,
                    "fragments": len(second.fragments),
                    "cached": hits,
                    "share": hits / len(second.fragments),
                    "fits_budget": second.fits_budget,
                }
            )
    return rows


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]), Path(sys.argv[2]))))
