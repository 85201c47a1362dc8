"""store: the files nlivis writes and reads back — checkpoint folders, predictions, named evaluations,
training state and logs — with the one atomic write, the one file hash and the one cache root every cache
uses. The bottom layer: it imports nothing else of nlivis."""
