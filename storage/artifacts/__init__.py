"""Artifacts and blobs: run layout and publishing, Parquet schemas, blob stores, reads and views."""
