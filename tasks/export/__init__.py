"""Exports: signed evidence bundles (``bundle.py`` writes one, ``verify.py`` checks one offline).

The bundle's format is in ``layout.py`` and the README's "Evidence bundles" section.
"""
