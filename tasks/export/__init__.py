"""Exports: signed evidence bundles (``bundle.py`` writes one, ``verify.py`` checks one offline).

The bundle's format is in ``layout.py`` and docs/how-to/exports.md.
"""
