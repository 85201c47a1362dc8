"""nlivis: `streamlit run app.py`. The router (`frame.navigation`): every page with its title and icon, Home
first. Each page runs inside `nlivis.app.components.frame.page`, so a link, a reload and Back show the same view.

The pages live in pages/ (`paths.PAGES_FOLDER`). Streamlit runs a `pages/` folder beside the main script as
old-style pages (no icons, an "app" entry, this router never run) for the first links opened after a launch;
`frame.run_through_the_router`, at the start of every page, turns that off."""
from __future__ import annotations

import streamlit as st

from nlivis.app.components import frame

st.set_page_config(page_title="nlivis", page_icon=":material/search:", layout="wide")
frame.navigation().run()
