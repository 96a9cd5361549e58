"""Shape operators: reshape and friends, broadcasting to shapes, layout transforms."""
