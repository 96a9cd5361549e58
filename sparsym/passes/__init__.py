"""Pure passes over an IndexedGraph: inference, gradient construction, memory planning."""
