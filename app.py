"""nlivis: `streamlit run app.py`. The router: names every page (Home first) with a bundled icon, so the
sidebar reads "Home" rather than the script's name and no icon depends on the browser's emoji font. Each page
runs inside `nlivis.app.components.frame.page`, so a link, a reload and Back show the same view.

The pages live in app_pages/ (`paths.PAGES_FOLDER`), not pages/: Streamlit runs a `pages/` folder beside the main script as old-style
pages (without this router: no icons, an "app" entry) for every link opened after a launch until someone opens
the root URL."""
from __future__ import annotations

import streamlit as st

from nlivis.app import paths

# Every page of the app, in sidebar order, from the one page table (`paths.PAGES`); url paths follow the file
# names (/Pair_explorer). (A bare string here would be drawn on every page by Streamlit's magic.)
PAGES = [st.Page(page.path, title=page.title, icon=page.icon, default=page is paths.HOME) for page in paths.PAGES]

st.set_page_config(page_title="nlivis", page_icon=":material/search:", layout="wide")
st.navigation(PAGES).run()
