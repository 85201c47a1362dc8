"""The parts pages are made of. A page is a title (`frame.header`) and a few calls into these modules:

frame         running a page inside the URL handling, its header, the loaded models, protocol notes
controls      widgets whose value is view state (in the session and the URL)
figures       a figure with its downloads; the clicks it sends back
pairs         the current pair: its form, why it is here, Previous / Next, reading it with every model
pair_list     a paged, ordered table of pairs whose lines open in the Pair explorer
lists         the lists of pairs behind numbers, rebuilt from the URL (`state.ListRef`)
samples       split + sample size + compute button of the "over a dataset split" views
tag_breakdown accuracy by annotation tag, DIIN's Table 7, accuracy by genre
challenge     a challenge file by category
home, explorer, diin, gates, errors, ablations, projection, train, attribution — each page's own parts.
"""
