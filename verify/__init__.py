"""Verifying an evidence bundle offline, the recipient's side: ``ves verify`` from the zip alone.

    bundle.py       verify_bundle: every check of a bundle, into one ``Verdict``
    verdict.py      Check, Failure, Verdict: what ``ves verify`` says
    layout.py       the bundle format (names, versions, safe paths), which the maker
                    (``tasks/export/``) imports from here: the format is the recipient's contract
    clips.py        reading a bundle's clips (frame times; which clip shows a span)
    clip_checks.py  the ``clips`` check
    credentials.py  each clip's Content Credentials (C2PA), against the recipient's own roots

A recipient runs this without the service: it imports the kernel (``ves``: errors, signature
primitives) and the span hash (``storage.artifacts.spans``), never Prefect, the catalog, a blob
store or the maker in ``tasks/export/`` (checked by ``tests/test_layers.py``).
"""
