"""Exports: making signed evidence bundles (``bundle.py`` writes one); ``verify/`` checks one.

The steps are in ``steps.py`` (Prefect tasks in ``stage.py``): ``select.py`` chooses the spans,
``windows.py`` merges their clip windows, ``copy.py`` stream-copies each window, ``cut.py``
re-encodes a window where ``redact.py`` redacts it, ``credentials.py`` signs a clip's Content
Credentials. The bundle's format is the verifier's (``verify/layout.py``), imported from there, and
in docs/how-to/exports.md.
"""
