import pytest
import tests.test_browser as tb
from tests.test_browser import page  # noqa: F401


@pytest.mark.slow
def test_tmp_ablations_shots(app_url, page):
    page.set_viewport_size({"width": 1280, "height": 3200})
    for tab in ("Paired+comparison", "What+the+paper+reports"):
        tb.open_url(page, f"{app_url}/Ablations?family=esan&protocol=mnli-small&tab={tab}", "Ablations")
        page.wait_for_timeout(4000)
        page.screenshot(path=f"/tmp/abl_{tab[:5]}.png")
    tb.open_url(page, f"{app_url}/Ablations?family=esan&protocol=snli-small", "Ablations")
    page.wait_for_timeout(4000)
    page.screenshot(path="/tmp/abl_snli.png")
