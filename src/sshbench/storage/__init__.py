"""Storage: the SQLite database of runs and samples (store) and the decoding of its rows (rows)."""
