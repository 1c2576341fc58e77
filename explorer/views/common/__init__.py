"""Parts every tab uses: background jobs, uploads and the result caches."""
