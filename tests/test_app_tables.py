"""A few lines drawn as a plain table (components/tables): the grid's number formats kept, a missing number a dash."""
import math

import pandas as pd

from nlivis.app.components.tables import MISSING, P_VALUE, WHOLE, styled


def test_a_small_table_keeps_the_grid_s_formats_and_shows_a_dash_for_a_missing_number():
    table = pd.DataFrame({"variant": ["a", "b"], "accuracy": [0.7236, math.nan], "McNemar p": [1.5e-18, 0.25],
                          "parameters": [1234567, None], "count": [3, None]})
    html = styled(table, {"McNemar p": P_VALUE, "parameters": WHOLE, "absent": "{:.1f}"}, percent=["accuracy"]).to_html()
    assert "72.36%" in html and "1.5e-18" in html and "2.5e-01" in html and "1,234,567" in html
    assert html.count(MISSING) == 3, "the missing accuracy, parameters and count"
    assert "nan" not in html.lower().replace("nan;", "") and "None" not in html
    assert table["accuracy"].iloc[0] == 0.7236, "the frame itself is not changed"
