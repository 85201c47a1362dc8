"""Home: the checkpoints found (with the papers' reported numbers beside ours), which are loaded, where data is."""
from nlivis.app import paths
from nlivis.app.components import frame, home

with frame.page(paths.HOME, title="nlivis — look inside sentence-matching models"):
    frame.caption_note(frame.SMALL_PROTOCOL_NOTE)
    home.introduction()
    home.folders_sidebar()
    home.checkpoints()
