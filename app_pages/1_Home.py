"""Home: the checkpoints found (with the papers' reported numbers beside ours), which are loaded, where data is."""
from nlivis.app.components import frame, home

with frame.page("home", "nlivis — look inside sentence-matching models", icon=":material/home:"):
    frame.caption_note(frame.SMALL_PROTOCOL_NOTE)
    home.introduction()
    home.folders_sidebar()
    home.checkpoints()
