"""Exports: signed evidence bundles (``bundle.py`` writes one, ``verify.py`` checks one offline).

The steps are in ``steps.py`` (Prefect tasks in ``stage.py``): ``select.py`` chooses the spans,
``windows.py`` merges their clip windows, ``copy.py`` stream-copies each window, ``cut.py``
re-encodes a window where ``redact.py`` redacts it. The bundle's format is in ``layout.py`` and
docs/how-to/exports.md.
"""
