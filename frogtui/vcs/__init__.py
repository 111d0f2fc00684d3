"""Git integration (the only package that imports git and unidiff)."""
