"""Detector plugins: each turns sampled frames into ``Detections`` behind one small interface.

Every detector has its own pydantic config selected by its ``type`` field (``motion`` needs no
model and is always available; heavier detectors look only where motion was found).
"""
