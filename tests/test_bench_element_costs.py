"""bench/element_costs.py writes one Streamlit page per variant and a router over them: every page is valid Python
that adds its variant's code to the floor page, and the router names each page once with its url path."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_variant_is_a_page_of_the_floor_plus_its_code(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))  # the bench's scripts import each other by name
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    import element_costs
    from browser_speed import FLOOR_PAGE

    url_paths = element_costs.app_files(tmp_path)
    assert list(url_paths) == list(element_costs.VARIANTS) and len(set(url_paths.values())) == len(url_paths)
    router = (tmp_path / "app.py").read_text(encoding="utf-8")
    ast.parse(router)
    for name, path in url_paths.items():
        page = (tmp_path / f"{path}.py").read_text(encoding="utf-8")
        ast.parse(page)
        assert page == FLOOR_PAGE.format(title=name) + element_costs.VARIANTS[name]
        assert f'url_path="{path}"' in router
    everything = element_costs.VARIANTS["all of the above on one page"]
    assert all(part in everything for part in element_costs.PARTS.values())
    assert all(element_costs.PARTS[name] not in element_costs.VARIANTS[f"all but {name}"] for name in element_costs.PARTS)


def test_the_floor_is_read_at_the_depth_of_each_page(tmp_path, monkeypatch):
    """Home against the floor's bare address, every other page against the floor's page at a path: a path costs
    Streamlit's frontend a base-path probe whatever the app, so reading a path page against the bare address would
    count Streamlit's time as nlivis's."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    from types import SimpleNamespace

    import browser_speed

    floor = SimpleNamespace(url="http://127.0.0.1:9")
    assert browser_speed.floor_url(floor, "Home") == floor.url
    router = (browser_speed.write_floor_app(tmp_path) / "app.py").read_text(encoding="utf-8")
    for page in browser_speed.PAGES[1:]:
        url = browser_speed.floor_url(floor, page)
        assert url.startswith(floor.url + "/") and len(url) > len(floor.url) + 1
        assert f'"{url.rsplit("/", 1)[1]}.py"' in router  # a page the floor's router serves
