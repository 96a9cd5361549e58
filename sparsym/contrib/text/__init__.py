"""``mx.contrib.text``: token counting, vocabularies and token embeddings."""
from . import embedding, utils, vocab  # noqa: F401
