"""Prefect flows: ``process_video`` (the DAG of the eight stages), and the operations around it."""
