"""Hostile media: a corpus of damaged and odd files, each run through the real flow."""
