"""The cases family: seeded scenes built around what ``random_scene`` lacks, with exact truth.

``scenes.random_case_scene(seed)`` draws a scene around one or two cases (a picture change while
things move, a thing leaving and returning, non-rigid shapes, shadows, photos, pairs walking
together); ``paths`` draws the walks, visits and pairs those scenes move along.
"""

from synthetic.cases.scenes import CASES, random_case_scene

__all__ = ["CASES", "random_case_scene"]
