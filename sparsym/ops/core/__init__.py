"""The operator library's core: the record (``registry.OpDef``, ``Dispatch``), typed
parameters, shared shape/type rules, graph nodes, gradient builders, front-end signatures
and the helpers every family uses (``helpers``). It registers no operator."""
