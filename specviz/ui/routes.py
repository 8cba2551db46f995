"""The app's pages in one table (routes.json): the navigation (app.py) and Home's "Where to go" both read it, so a
page's title, icon and place are written once."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Route:
    section: str            # the navigation's group
    path: str               # the page's script, from the repository root
    title: str
    icon: str               # a :material: icon's name
    url: str                # its URL path; "" for the default page (Home)
    home_column: int = 0    # the column of Home's "Where to go" that lists it (1 or 2); 0: not listed there
    about: str = ""         # what Home says the page holds

    @property
    def material(self) -> str:
        return f":material/{self.icon}:"


ROUTES = tuple(Route(**r) for r in json.loads(Path(__file__).with_name("routes.json").read_text(encoding="utf-8")))
