"""Image operators of ``mx.nd.image`` / ``mx.sym.image``."""
