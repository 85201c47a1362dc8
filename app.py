"""nlivis: `streamlit run app.py`. The router: names every page (Home first) with a bundled icon, so the
sidebar reads "Home" rather than the script's name and no icon depends on the browser's emoji font. Each page
runs inside `nlivis.app.components.frame.page`, so a link, a reload and Back show the same view.

The pages live in app_pages/, not pages/: Streamlit runs a `pages/` folder beside the main script as old-style
pages (without this router: no icons, an "app" entry) for every link opened after a launch until someone opens
the root URL."""
from __future__ import annotations

import streamlit as st

# Every page of the app, in sidebar order; url paths follow the file names (/Pair_explorer). (A bare string here
# would be drawn on every page by Streamlit's magic.)
PAGES = [
    st.Page("app_pages/1_Home.py", title="Home", icon=":material/home:", default=True),
    st.Page("app_pages/2_Pair_explorer.py", title="Pair explorer", icon=":material/compare_arrows:"),
    st.Page("app_pages/3_DIIN_interaction_space.py", title="DIIN interaction space", icon=":material/grid_on:"),
    st.Page("app_pages/4_Gates.py", title="Gates", icon=":material/tune:"),
    st.Page("app_pages/5_Error_analysis.py", title="Error analysis", icon=":material/rule:"),
    st.Page("app_pages/6_Ablations.py", title="Ablations", icon=":material/science:"),
    st.Page("app_pages/7_Projection.py", title="Projection", icon=":material/scatter_plot:"),
    st.Page("app_pages/8_Train.py", title="Train", icon=":material/model_training:"),
    st.Page("app_pages/9_Attribution.py", title="Attribution", icon=":material/highlight:"),
    st.Page("app_pages/10_Data_map.py", title="Data map", icon=":material/bubble_chart:"),
]

st.set_page_config(page_title="nlivis", page_icon=":material/search:", layout="wide")
st.navigation(PAGES).run()
