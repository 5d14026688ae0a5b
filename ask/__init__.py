"""Ask Video: answers computed from a run's artifacts, every claim backed by evidence spans.

``world.py`` loads what a run knows (through ``storage``), ``intent.py`` reads the question,
``compose.py`` turns the matching facts into claims with citations, ``guardrail.py`` checks every
claim against the run before anything is said, and ``phrasing.py`` may let a language model
reword the checked claims (behind the same guardrail). ``engine.py`` ties them together.
"""
